import fc from 'fast-check'
import { jsonText, parseExactJson } from '../../http/json-body.ts'
import { pointerToken } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { concreteType, kindOf } from '../requests/bodies.ts'
import { isJsonPatch } from '../requests/json-patch.ts'
import { isMergePatch, mergePatch } from '../requests/merge-patch.ts'
import { answeredKey, bare, bodyEnvelope, jsonBodySchema, placeIn, propertiesOf, successJson, valueIn, type Action, type Resource } from '../routes/resources.ts'
import { concretePath } from '../routes/path-template.ts'
import type { RouteSpec } from '../routes/routes.ts'
import { isObject } from '../schemas/schema-at.ts'
import { derefSchema, type JsonSchema } from '../schemas/schema.ts'
import type { Validators } from '../schemas/validation.ts'
import { requiredOf, sendable, Unbuildable, type Case, type Planner } from './cases.ts'
import { noAnswer, type Answer, type CheckName, type Judge } from './checks.ts'
import { alike, holds } from './same-value.ts'
import { bodyReadBack, multipartParts, type HttpRequest } from './spelling.ts'

// Conversations with a service, where most of an API's defects live: for each resource the
// document describes (routes/resources.ts, the mock's own inference), a chain of requests (create,
// a second create, read, patch, read, patch all, read, replace, read, replace all, read, delete,
// read) with the key carried from the create's answer (its body, else Location) and the item's
// ETag to a write's If-Match; a resource a PUT makes under the key in its path
// starts with that PUT, under a key of the document's (its sample); a key the client gives in a
// create's body is one no create of the run has sent; a write refused as a conflict (409: that
// key, or an email or a name a service keeps unique, taken by an earlier request) is sent again
// with another body. A patch in JSON Patch (RFC 6902) is sent as `add` operations of members a
// create would send; bodies that hold the item in the answers' envelope (JSON:API's {"data": …}) are compared
// within it, and name the item's key where they have it. Each parent is made first
// where the document shows how. A change refused as the client's fault (4xx) changed nothing: the
// chain goes on without it. Each answer is judged as its operation's are (its status, media
// type, schema, headers: a read's 200 is often answered only here, where there is something to
// read); and the chain by checks of its own, each firing only on what the document promises:
// ensure_resource_availability (a created resource cannot be read), use_after_free (a deleted one
// still can, where the read declares a 404), read_after_write (a read does not answer what a
// create, change or replace wrote, where the read's schema takes the value as written) and
// unique_keys (two creates given one key the server chose). A failing chain is shrunk to the
// fewest steps that still fail the same check, each try sent again from a fresh create. An
// operation outside the chains whose path names a resource's key is sent with that resource made
// first (referring), so that a valid request does not name data that is not there; so is one whose
// JSON body names it by its key's path parameter ({"shelfId": …} of /shelves/{shelfId}), and a
// chain's writes whose bodies do.

type ChainStep = 'create' | 'create again' | 'read' | 'patch' | 'patch all' | 'replace' | 'replace all' | 'delete'
// 'request': an operation outside the chains (or a chain's create), sent with what it names made first.
type Step = ChainStep | 'request'
/** A request of a chain, as sent, and its answer's status. */
export interface SentStep { step: Step, route: RouteSpec, request: HttpRequest, secrets: Case['secrets'], status?: number }
/** A property of a request's JSON body that names a resource's key (sequences' namedIn), and the schema its value must meet. */
interface BodyKey { name: string, owner: Resource, schema: JsonSchema }
/** The item's own key in a write's body: the property, within the envelope the body holds the item in. */
interface OwnKey { envelope: string[], property: string, key: unknown }
export interface SequenceViolation { check: CheckName, status: number, detail: string, steps: SentStep[], route: RouteSpec }
/** A violation of one answer in a chain, by its operation's checks: with the chain's steps up to it, to shrink. */
export interface ChainAnswerViolation extends SequenceViolation { chain: ChainStep[] }

/** Sends a request of a chain; undefined when the run's bounds are spent, an Error when nothing came back. */
export type ChainExchange = (request: HttpRequest) => Promise<Answer | Error | undefined>

// A write refused as a conflict (409) is sent with another body: so many times in all.
const WRITE_TRIES = 3

const json = (answer: Answer): unknown => { try { return parseExactJson(answer.body.toString('utf8')) } catch { return undefined } }
const ok = (answer: Answer): boolean => answer.status >= 200 && answer.status < 300
/** An object without its null members, at every depth; a list, as it is (a merge patch replaces it whole). */
const withoutNulls = (value: unknown): unknown => isObject(value) ? Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== null).map(([name, inner]) => [name, withoutNulls(inner)])) : value

/** A path's text with its escapes undone; as it is where one is malformed (a service's Location: `%zz`). */
function decoded (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** The members a JSON Patch writes, where it only adds or replaces members of the item itself; else undefined (nothing a read can be held to). */
function patched (operations: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(operations)) return undefined
  const members: Record<string, unknown> = {}
  for (const operation of operations) {
    const target = isObject(operation) && typeof operation.path === 'string' ? /^\/([^/]*)$/.exec(operation.path) : null
    if (target === null || !['add', 'replace'].includes(operation.op as string) || !('value' in operation)) return undefined
    members[target[1].replaceAll('~1', '/').replaceAll('~0', '~')] = operation.value
  }
  return members
}

/** Whether both requests carry one Idempotency-Key (or X-Idempotency-Key): a server that honours it answers the second as the first. */
function sameIdempotencyKey (one: HttpRequest, other: HttpRequest): boolean {
  const keyOf = (request: HttpRequest) => Object.entries(request.headers).find(([name]) => /^(x-)?idempotency-key$/i.test(name))?.[1]
  return keyOf(one) !== undefined && keyOf(one) === keyOf(other)
}

/**
 * The key of the item a create made, as its client learns it: the one its answer's body gives
 * (answeredKey), else its Location's last segment, else what the request sent.
 */
export function createdKey (doc: OpenApiDocument, resource: Resource, route: RouteSpec, answered: unknown, location: string | undefined, sent: unknown): unknown {
  const segment = location?.split('?')[0].split('/').filter((part) => part !== '').at(-1)
  return answeredKey(doc, resource, route, answered) ?? (segment === undefined ? undefined : decoded(segment)) ?? (sent as any)?.[resource.property!]
}

// A schema of properties and no type means an object, though JSON Schema lets a list through it:
// a list written there (Visma's contract details, a list in its create, an object in its read) is no promise to keep.
const meantObject = (property: JsonSchema, value: unknown): boolean => property.type === undefined && isObject(property.properties) && !isObject(value)

/**
 * What a read's item holds otherwise than `sent` wrote: each property the read declares and takes
 * as sent (a string sent where an object is read cannot come back as sent), within the item read
 * too, the server's own (readOnly), the writeOnly ones and the key aside; an object read may hold
 * more than was written, and a value of a format a store spells its own way may come back so
 * (same-value.ts).
 */
export function unwritten (doc: OpenApiDocument, validators: Validators, schema: unknown, key: string | undefined, sent: unknown, read: unknown): string[] {
  if (!isObject(sent)) return []
  const declared = propertiesOf(doc, schema)
  // Where the read is valid, a value its schema refuses in it is no promise to keep (Azure's
  // groups: an allOf part's additionalProperties takes only objects, so no displayName is valid).
  const whole = isObject(schema) ? validators.response(schema) : undefined
  const valid = whole !== undefined && isObject(read) && whole(read)
  return Object.entries(sent).filter(([name, value]) => {
    const property = derefSchema(doc, declared[name])
    return name !== key && property !== undefined && property.readOnly !== true && property.writeOnly !== true && validators.response(property)(value) && !meantObject(property, value) &&
      !holds((read as any)?.[name], value, { doc, schema: property }) && !(valid && !whole({ ...read, [name]: value }))
  }).map(([name, value]) => `${name}: written ${jsonText(value)?.slice(0, 60)}, read ${jsonText((read as any)?.[name])?.slice(0, 60)}`)
}

/**
 * What a request's body wrote, as a server reads it: JSON as sent; a form or multipart body as
 * its fields come back, converted as their schemas say (an empty object or list is no field at
 * all); in any other type (text, bytes) no item's properties, whatever its schema says
 * (AppCenter's release update, an object in text/plain): nothing to compare.
 */
export function writtenBy (doc: OpenApiDocument, validators: Validators, { media, body }: Case['values']): unknown {
  const kind = media === undefined ? undefined : kindOf(concreteType(media.type))
  if (kind === 'json' || kind === undefined) return body
  if (media?.schema === undefined || (kind !== 'form' && kind !== 'multipart')) return undefined
  const read = bodyReadBack(doc, media, body)
  validators.text(media.schema)(read)
  // A file part is kept as a file: what a read answers of it (a name, a URL) is not its bytes.
  const files = new Set(kind === 'multipart' ? multipartParts(doc, media, body).filter((part) => part.file).map((part) => part.name) : [])
  return isObject(read) ? Object.fromEntries(Object.entries(read).filter(([name]) => !files.has(name))) : read
}

/**
 * What a replace left out that a read still answers as it was before: each property the read
 * declares and does not require (one it requires, the server must give some value), neither the
 * server's (readOnly, a default, what the item's path names: its key, a parent's, as Google
 * Storage's projectId) nor of a value a server might give on its own (a number, a boolean, one of
 * an enum), that the read holds as the earlier write did. PUT replaces what is there (RFC 9110,
 * 9.3.4): one that merges keeps it.
 */
export function keptThrough (doc: OpenApiDocument, schema: unknown, named: string[], leftOut: Record<string, unknown>, read: unknown): string[] {
  const declared = propertiesOf(doc, schema)
  const required = requiredOf(doc, schema)
  const distinctive = (value: unknown): boolean => (typeof value === 'string' && value !== '') || (Array.isArray(value) && value.length > 0) || (isObject(value) && Object.keys(value).length > 0)
  return Object.entries(leftOut).filter(([name, value]) => {
    const property = derefSchema(doc, declared[name])
    return !named.includes(name) && property !== undefined && !required.has(name) && property.readOnly !== true && property.writeOnly !== true && property.default === undefined &&
      property.enum === undefined && property.const === undefined && distinctive(value) && alike((read as any)?.[name], value, { doc, schema: property })
  }).map(([name, value]) => `${name}: left out, read ${jsonText(value)?.slice(0, 60)}`)
}

/**
 * What makes a resource's items: its create (POST /orders); else its replace, which makes an item
 * under the key the client puts in its path (PUT /gadgets/{sku}), as the mock's does.
 */
export const creatorOf = (resource: Resource): RouteSpec | undefined => resource.operations.create ?? resource.operations.replace

/**
 * The chain of steps a resource can take, in order: what its operations allow. A second create
 * only where the server chooses the key. A patch of one property, then of all that change; a
 * replace of the required properties alone, then of all: the first tells a merge from a replace,
 * the second that nothing written was lost.
 */
export function chainOf (resource: Resource): ChainStep[] {
  const { operations: has } = resource
  const steps: ChainStep[] = has.create !== undefined ? ['create', 'create again', 'read'] : ['create', 'read']
  if (has.patch !== undefined) steps.push('patch', 'read', 'patch all', 'read')
  if (has.replace !== undefined) steps.push('replace', 'read', 'replace all', 'read')
  if (has.delete !== undefined) steps.push('delete', 'read')
  return steps
}

/** A write's valid bodies: the document's (the first `fixed`) and drawn ones (in `rounds` of twenty more), and the one of its required properties alone. */
interface Bodies { bodies: unknown[], fixed: number, required: unknown, rounds: number }

/** What the chains of one run share, whichever operation's requests they are counted as. */
export interface ChainMemory {
  /** A write's valid bodies, found once (bodiesOf). */
  bodies: Map<RouteSpec, Bodies | Unbuildable>
  /**
   * The keys a client gives in a create's body (JSON), by resource, as sent: each create sends one
   * not sent before, as a client making a new item would, where a service refuses a key taken.
   */
  taken: Map<Resource, Set<string>>
  /** A write's bodies refused as a conflict (409), as sent, and the document's own beside them: none is sent again. */
  conflicts: Map<RouteSpec, Set<string>>
}

export const chainMemory = (): ChainMemory => ({ bodies: new Map(), taken: new Map(), conflicts: new Map() })

/** Runs chains of one document: each resource's, and its shrinking. */
export function sequences (doc: OpenApiDocument, validators: Validators, resources: Resource[], planOf: (route: RouteSpec) => Planner, judgeOf: (route: RouteSpec) => Judge, send: ChainExchange, enabled: ReadonlySet<CheckName>, seed: number, memory: ChainMemory) {
  const byItem = new Map(resources.map((resource) => [bare(resource.item), resource]))
  const keyOf = (resource: Resource, route: RouteSpec, answer: Answer, sent: Case): unknown => createdKey(doc, resource, route, json(answer), answer.headers.location, sent.values.body)
  /**
   * What is wrong with a create's Location (RFC 9110, 15.3.2: the item it made), where it does not
   * name the item: its path ends with neither the item's path (`/shelves/7/books/9`) nor its
   * collection's name and key (`/books/9`, a path of its own), under whatever base it names.
   */
  const strayLocation = (resource: Resource, location: string | undefined, key: unknown, values: Record<string, unknown>): string | undefined => {
    if (location === undefined) return undefined
    let path: string
    try {
      path = new URL(location, 'http://base/').pathname.replace(/\/+$/, '')
    } catch {
      return `${JSON.stringify(location)}, no URL`
    }
    const item = bare(concretePath(resource.item, values))
    const own = `/${resource.name}/${encodeURIComponent(String(key))}`
    const named = (suffix: string): boolean => path.endsWith(suffix) || decoded(path).endsWith(decoded(suffix))
    return named(item) || named(own) ? undefined : `${location} (the item is ${item})`
  }
  /** The read's item, where its answer carries one. */
  const itemOf = (resource: Resource, answer: Answer): unknown => {
    const media = successJson(resource.operations.read)?.media
    const place = media?.schema === undefined ? undefined : placeIn(doc, resource, media.schema)
    return place === undefined ? undefined : valueIn(json(answer), place.envelope)
  }
  /**
   * The schema of the item a read answered: of a read of several shapes (a oneOf or anyOf), the
   * one the item is (Ably's rule, patched to another type, is read as that type's), else the first.
   */
  const readSchema = (resource: Resource, item: unknown): unknown => {
    const media = successJson(resource.operations.read)?.media
    if (media?.schema === undefined) return undefined
    const root = derefSchema(doc, media.schema)
    for (const branch of [...(root?.oneOf ?? []), ...(root?.anyOf ?? [])]) {
      const placed = placeIn(doc, resource, branch)
      if (placed !== undefined && validators.response(placed.schema)(item)) return placed.schema
    }
    return placeIn(doc, resource, media.schema)?.schema
  }
  /** Where a write to the item names the item's own key, in its body or in the envelope it holds the item in (bodyEnvelope); undefined where it does not, where the key is the server's to write (readOnly), or where its schema does not take the key as the chain has it. */
  const ownKeyIn = (resource: Resource, route: RouteSpec, envelope: string[], key: unknown): OwnKey | undefined => {
    const schema = jsonBodySchema(route)
    const { property: name } = resource
    const property = name === undefined ? undefined : derefSchema(doc, propertiesOf(doc, envelope.length === 0 ? schema : propertiesOf(doc, schema)[envelope[0]])[name])
    return name === undefined || property === undefined || property.readOnly === true || !validators.request(property)(key) ? undefined : { envelope, property: name, key }
  }
  const declares404 = (route: RouteSpec | undefined): boolean => route?.responses.some((r) => ['404', '410', '4XX'].includes(r.status)) === true

  /** Of these bodies, those of the media type a chain sends (its JSON, where it takes JSON), valid as the engine reads them. */
  const valid = (plan: Planner, bodies: unknown[]): unknown[] => bodies.filter((body) => body !== undefined && !(plan.linked({ parameters: new Map(), body: { value: body } }) instanceof Error))
  /** The `round`th twenty bodies drawn from the write's schema. */
  const drawnBodies = (plan: Planner, round: number): unknown[] => {
    const drawn = plan.generated()
    return drawn === undefined ? [] : valid(plan, fc.sample(drawn.values, { seed: seed + round, numRuns: 20 }).map((values) => drawn.request(values)?.values.body))
  }
  // A write's valid bodies, found once for all its chains: the document's example, the samples
  // (the required-only one apart) and twenty drawn from its schema; twenty more, up to a hundred,
  // each time `more` asks (a create has sent every key a client gives in them).
  const bodiesOf = (route: RouteSpec, more = false): Bodies | Unbuildable => {
    let found = memory.bodies.get(route)
    if (found !== undefined && !(more && !(found instanceof Unbuildable) && found.rounds < 5)) return found
    try {
      const plan = planOf(route)
      if (found === undefined) {
        const fixed = plan.fixed().filter((c) => c.kind === 'valid')
        const documented = valid(plan, fixed.map((c) => c.values.body))
        found = { bodies: [...documented, ...drawnBodies(plan, 0)], fixed: documented.length, required: fixed.find((c) => c.source === 'minimal')?.values.body, rounds: 0 }
      } else {
        found.bodies.push(...drawnBodies(plan, ++found.rounds))
      }
    } catch (err) {
      if (!(err instanceof Unbuildable)) throw err
      found = err
    }
    memory.bodies.set(route, found)
    return found
  }

  /** A request's parameters (by their place) that a chain gives: its path's values (by name), and the item's last ETag as its If-Match. */
  const givenOf = (plan: Planner, path: Record<string, unknown>, etag: string | undefined): Map<number, unknown> => {
    const given = new Map<number, unknown>()
    plan.parameters.forEach((p, i) => {
      if (p.in === 'path' && p.name in path) given.set(i, path[p.name])
      if (p.in === 'header' && p.name.toLowerCase() === 'if-match' && etag !== undefined) given.set(i, etag)
    })
    return given
  }

  /**
   * A JSON Patch (RFC 6902) of `route` that writes members of an item as its create would have
   * them (`values`, the create's valid bodies), each one that `current` holds otherwise: one
   * member, or, `whole`, all of the body that changes the most; each an `add` (which replaces a
   * member that is there, and makes one that is not). The first the document takes, or undefined.
   */
  const jsonPatchOf = (route: RouteSpec, values: unknown[], { path, current, whole, etag, key }: { path: Record<string, unknown>, current: unknown, whole: boolean, etag?: string, key?: string }): Case | undefined => {
    const plan = planOf(route)
    const given = givenOf(plan, path, etag)
    const changes = (value: unknown): Array<[string, unknown]> => isObject(value) ? Object.entries(value).filter(([name, inner]) => name !== key && !(isObject(current) && alike(current[name], inner))) : []
    const each = values.map(changes).filter((found) => found.length > 0)
    const tries = whole ? [...each].sort((a, b) => b.length - a.length).slice(0, 5) : each.flat().map((change) => [change])
    for (const members of tries) {
      const made = plan.linked({ parameters: given, body: { value: members.map(([name, value]) => ({ op: 'add', path: `/${pointerToken(name)}`, value })) } })
      if (!(made instanceof Error)) return made
    }
    return undefined
  }

  /**
   * A request of `route` with these path values (by name) and, for a write, a valid body: one that
   * changes something of `current` where it can (a change to what is there already shows nothing),
   * from the document's example, its sample, or values drawn from its schema; the keys in `named`
   * (by property) put in it where its body names them (namedIn); the item's last ETag as its
   * If-Match, where the operation takes one (a write made conditional, as RFC 9110 has it); of
   * the bodies, those `fresh` takes first.
   */
  const requestOf = (route: RouteSpec, { path, withBody, current, named = {}, own, envelope = [], partial = false, whole = false, etag, fresh }: { path: Record<string, unknown>, withBody: boolean, current?: unknown, named?: Record<string, unknown>, own?: OwnKey, envelope?: string[], partial?: boolean, whole?: boolean, etag?: string, fresh?: (body: unknown) => boolean }): Case | Error => {
    const plan = planOf(route)
    const given = givenOf(plan, path, etag)
    /** A body with the item's own key where it names it (`{"data": {"id": …}}` of JSON:API, the `id` of a PUT's body). */
    const keyed = (value: Record<string, unknown>): Record<string, unknown> => {
      if (own === undefined) return value
      if (own.envelope.length === 0) return { ...value, [own.property]: own.key }
      const [wrapper] = own.envelope
      return { ...value, [wrapper]: { ...(isObject(value[wrapper]) ? value[wrapper] : {}), [own.property]: own.key } }
    }
    let body: { value: unknown } | undefined
    if (withBody) {
      let found = bodiesOf(route)
      if (fresh !== undefined && !(found instanceof Unbuildable) && !found.bodies.some(fresh)) found = bodiesOf(route, true)
      if (found instanceof Unbuildable) return found
      const { required } = found
      const fresher = fresh === undefined ? [] : found.bodies.filter(fresh)
      const bodies = fresher.length > 0 ? fresher : found.bodies
      try {
        // Compared with what is there as the body holds the item (in its envelope, where it has one), its key aside.
        const changed = (value: unknown): number => {
          const item = valueIn(value, envelope)
          return !isObject(current) || !isObject(item) ? 1 : Object.entries(item).filter(([name, inner]) => name !== own?.property && !alike(current[name], inner)).length
        }
        const changes = (value: unknown): boolean => changed(value) > 0
        // A whole write, the body that changes the most: a property written as it was shows no loss.
        const chosen = whole ? bodies.reduce((best, value) => changed(value) > changed(best) ? value : best, bodies[0]) : bodies.find(changes) ?? bodies[0]
        const keys = Object.fromEntries(namedIn(route).flatMap(({ name }) => name in named ? [[name, named[name]]] : []))
        // A patch of one property that changes, where the operation takes one: a whole body patched
        // reads the same whether the service merged it or replaced all with it.
        if (partial && !whole && envelope.length === 0 && isObject(chosen) && isObject(current)) {
          for (const [name, value] of Object.entries(chosen)) {
            if (value === null || alike(current[name], value)) continue
            const one = plan.linked({ parameters: given, body: { value: keyed({ [name]: value, ...keys }) } })
            if (!(one instanceof Error)) return one
          }
        }
        // All of a patch but its objects' nulls, which JSON Merge Patch reads as "remove it", where it stays valid without them.
        const stripped = partial && whole ? withoutNulls(chosen) : chosen
        if (isObject(stripped) && !alike(stripped, chosen)) {
          const kept = plan.linked({ parameters: given, body: { value: keyed({ ...stripped, ...keys }) } })
          if (!(kept instanceof Error)) return kept
        }
        // A replace of the required properties alone, where that still changes something: what it
        // leaves out of what is there, a replace takes away (keptThrough).
        if (!partial && !whole && envelope.length === 0 && isObject(current) && isObject(chosen) && isObject(required)) {
          const trimmed = keyed({ ...Object.fromEntries(Object.entries(chosen).filter(([name]) => name in required)), ...keys })
          const one = Object.keys(trimmed).length < Object.keys({ ...chosen, ...keys }).length && changes(trimmed) ? plan.linked({ parameters: given, body: { value: trimmed } }) : undefined
          if (one !== undefined && !(one instanceof Error)) return one
        }
        if (bodies.length > 0) body = { value: isObject(chosen) ? keyed({ ...chosen, ...keys }) : chosen }
      } catch (err) {
        if (!(err instanceof Unbuildable)) throw err
        return err
      }
    }
    try {
      return plan.linked({ parameters: given, ...(body !== undefined && { body }) })
    } catch (err) {
      if (!(err instanceof Unbuildable)) throw err
      return err
    }
  }

  /** A chain as it ran: the first violation of the chain's checks (where it stopped), each answer's own violations (the first of each operation and check), or why it stopped; the changes refused on the way. */
  interface Ran { violation?: SequenceViolation, answers: ChainAnswerViolation[], note?: string, refused: string[], sent: SentStep[], key?: unknown, steps: ChainStep[], path?: Record<string, unknown> }

  /** The resource whose key the path template's parameter `name` is (/customers/{customerId} of /customers/{customerId}/addresses), if any. */
  const ownerOf = (template: string, name: string): Resource | undefined => {
    const segments = template.split('/')
    const at = segments.indexOf(`{${name}}`)
    return at === -1 ? undefined : byItem.get(segments.slice(0, at + 1).join('/'))
  }

  // Resources by their key's path parameter, where no other resource's has that name.
  const byParameter = new Map<string, Resource | undefined>()
  for (const resource of resources) byParameter.set(resource.parameter, byParameter.has(resource.parameter) ? undefined : resource)
  const bodyNames = new Map<RouteSpec, BodyKey[]>()
  /**
   * The properties of a route's JSON body that name what a create makes, spelled as that
   * resource's key in its path ({"shelfId": …} of /shelves/{shelfId}), with their schemas; not
   * its own resource's, nor `id`, which may be any resource's key.
   */
  const namedIn = (route: RouteSpec): BodyKey[] => {
    if (!bodyNames.has(route)) {
      const properties = propertiesOf(doc, jsonBodySchema(route))
      bodyNames.set(route, Object.entries(properties).flatMap(([name, schema]) => {
        const owner = name === 'id' ? undefined : byParameter.get(name)
        return owner === undefined || Object.values(owner.operations).includes(route) ? [] : [{ name, owner, schema: derefSchema(doc, schema) ?? {} }]
      }))
    }
    return bodyNames.get(route)!
  }

  /**
   * What a route's body names (namedIn), made first, each by its resource's create: the keys by
   * property, and the requests that made them; undefined when the run's bounds ran out. One that
   * could not be made, or whose key the property's schema does not take, is left out: the body
   * keeps its own value, as it would without this.
   */
  const keysFirst = async (route: RouteSpec, depth: number): Promise<{ named: Record<string, unknown>, sent: SentStep[] } | undefined> => {
    const named: Record<string, unknown> = {}
    const sent: SentStep[] = []
    if (depth > 3) return { named, sent }
    for (const { name, owner, schema } of namedIn(route)) {
      const made = await run(owner, ['create'], depth + 1)
      if (made === undefined) return undefined
      sent.push(...made.sent)
      if (made.key !== undefined && validators.request(schema)(made.key)) named[name] = made.key
    }
    return { named, sent }
  }

  /**
   * What the path template's parameters `names` name, made first: the last of them that is a
   * resource's key, by that resource's create (its own parents first, so that one parent holds the
   * other); the values by name, and the requests that made them; or why it could not be made.
   */
  const madeFirst = async (template: string, names: string[], depth: number): Promise<{ path: Record<string, unknown>, sent: SentStep[], note?: string } | undefined> => {
    const name = [...names].reverse().find((parameter) => ownerOf(template, parameter) !== undefined)
    if (name === undefined || depth > 3) return { path: {}, sent: [] }
    const owner = ownerOf(template, name)!
    const made = await run(owner, ['create'], depth + 1)
    if (made === undefined) return undefined
    if (made.key === undefined) return { path: {}, sent: made.sent, note: `${owner.name} could not be made: ${made.note ?? 'no key'}` }
    return { path: { ...made.path, [name]: made.key }, sent: made.sent }
  }

  /**
   * Runs `steps` of the resource's chain from a fresh create, its parents made first: the first
   * violation, with every request that led to it, and the steps of the chain up to it; or why the
   * chain could not go on (a note); undefined when the run's bounds ran out.
   */
  const run = async (resource: Resource, steps: ChainStep[], depth = 0): Promise<Ran | undefined> => {
    const first = await madeFirst(resource.item, resource.parents, depth)
    if (first === undefined) return undefined
    const { path, sent } = first
    const answers: ChainAnswerViolation[] = []
    const refused: string[] = []
    if (first.note !== undefined) return { note: `its parent, ${first.note}`, answers, refused, sent, steps }
    const creator = creatorOf(resource)!
    const keys = await keysFirst(creator, depth)
    if (keys === undefined) return undefined
    sent.push(...keys.sent)
    let key: unknown
    // What a read answers next, and what the last replace left out of what was there before it.
    let written: { body: unknown, by: RouteSpec, leftOut?: Record<string, unknown> } | undefined
    let deleted = false
    // The item's entity tag as its last answer gave it, for a write that must name it (If-Match).
    let etag: string | undefined
    const taken = memory.taken.get(resource) ?? new Set<string>()
    memory.taken.set(resource, taken)
    // The key a write's body gives, within the envelope it holds the item in (Wowza's {"output_stream_target": {"stream_target_id": …}}).
    const givenKey = (body: unknown, envelope: string[]): { value: unknown } | undefined => {
      const item = valueIn(body, envelope)
      return isObject(item) && resource.property !== undefined && resource.property in item ? { value: item[resource.property] } : undefined
    }
    // That key as text, as `taken` holds it.
    const keyIn = (body: unknown, envelope: string[]): string | undefined => {
      const given = givenKey(body, envelope)
      return given === undefined ? undefined : jsonText(given.value)
    }
    // Whether that key can name the item in its path (not ".", which a URL's dot segments take out).
    const keyParameter = resource.operations.read?.parameters.find((p) => p.in === 'path' && p.name === resource.parameter)
    const pathTakes = (body: unknown, envelope: string[]): boolean => {
      const given = givenKey(body, envelope)
      return keyParameter === undefined || given === undefined || sendable(keyParameter, given.value)
    }
    for (const [index, step] of steps.entries()) {
      const creates = step === 'create' || step === 'create again'
      const action = step === 'patch all' ? 'patch' : step === 'replace all' ? 'replace' : step
      const route = creates ? creator : resource.operations[action as Action]!
      const upTo = steps.slice(0, index + 1)
      // Where its body holds the item (JSON:API's {"data": …}), for what it writes and what is compared.
      const envelope = bodyEnvelope(doc, resource, route)
      let made: Case | Error
      let answer: Answer | Error | undefined
      const withBody = step !== 'read' && step !== 'delete'
      // A JSON Patch is made from what is there: no other body takes its place.
      const patches = action === 'patch' && isJsonPatch(doc, planOf(route).media)
      const conflicts = memory.conflicts.get(route) ?? new Set<string>()
      memory.conflicts.set(route, conflicts)
      // A body no conflict refused, and for a create, one whose key (where the client gives it) no create has sent and its path can carry.
      const fresh = (body: unknown): boolean => !conflicts.has(jsonText(body)) && !(creates && (taken.has(keyIn(body, envelope) ?? '') || !pathTakes(body, envelope)))
      for (let tries = 1; ; tries++) {
        const at = creates ? path : { ...path, [resource.parameter]: key }
        const values = patches ? bodiesOf(creator) : undefined
        made = (values === undefined || values instanceof Unbuildable ? undefined : jsonPatchOf(route, values.bodies, { path: at, current: written?.body, whole: action !== step, etag, key: resource.property })) ??
          requestOf(route, { path: at, withBody, current: step === 'create again' ? undefined : written?.body, named: keys.named, ...(!creates && { own: ownKeyIn(resource, route, envelope, key) }), envelope, partial: action === 'patch', whole: action !== step, etag, fresh })
        if (made instanceof Error) return { note: `${step}: no valid request could be made (${made.message})`, answers, refused, sent, steps: upTo }
        // Taken as it is sent: a chain run beside this one takes another.
        const given = creates ? keyIn(made.values.body, envelope) : undefined
        if (given !== undefined) taken.add(given)
        answer = await send(made.request)
        if (answer === undefined) return undefined
        // A conflict (409: a key the client gives, or a value the service keeps unique, taken by an
        // earlier request or by data already there): another body is tried, as a client would; the
        // refused write is no step of the chain.
        if (!withBody || patches || answer instanceof Error || answer.status !== 409 || tries === WRITE_TRIES) break
        // The document's own bodies, which the operation's requests sent already, alike in what it keeps unique: drawn ones next.
        const found = bodiesOf(route)
        for (const body of [made.values.body, ...(found instanceof Unbuildable ? [] : found.bodies.slice(0, found.fixed))]) conflicts.add(jsonText(body))
      }
      const record: SentStep = { step, route, request: made.request, secrets: made.secrets }
      sent.push(record)
      if (answer instanceof Error) {
        const [failed] = noAnswer(answer, enabled)
        return failed === undefined ? { note: `${step}: no answer (${answer.message})`, answers, refused, sent, steps: upTo } : { violation: { ...failed, steps: [...sent], route }, answers, refused, sent, key, steps: upTo }
      }
      record.status = answer.status
      if (step !== 'create again' && ok(answer) && answer.headers.etag !== undefined) etag = answer.headers.etag
      // The answer judged as its operation's are, the first of each check kept. A read of what was
      // deleted may be refused in whatever status the service chooses.
      for (const violation of judgeOf(route)({ source: 'sequence' }, answer)) {
        if (deleted && step === 'read' && !ok(answer) && (violation.check === 'status_code_conformance' || violation.check === 'positive_data_acceptance')) continue
        if (!answers.some((v) => v.route === route && v.check === violation.check)) answers.push({ ...violation, steps: [...sent], route, chain: upTo })
      }
      const stop = (note: string): Ran => ({ note, answers, refused, sent, key, steps: upTo })
      // A violation, where its check is on: the create's for what a create did, the writer's for what a read lost, the delete's for what it left.
      const fail = (check: CheckName, detail: string, by: RouteSpec): Ran | undefined =>
        enabled.has(check) ? { violation: { check, status: answer.status, detail, steps: [...sent], route: by }, answers, refused, sent, key, steps: upTo } : undefined
      // Accepted (202): a write under way, not yet done (RFC 9110, 15.3.3): what is read next says nothing of it.
      if (answer.status === 202 && step !== 'read') return stop(`${step}: answered 202 (accepted, not yet done): nothing after it is judged`)
      if (creates) {
        if (!ok(answer)) return stop(`${step}: answered ${answer.status}`)
        // Made by its replace: under the key the request's path gave it.
        const given = route === resource.operations.create ? keyOf(resource, route, answer, made) : made.values.parameters[planOf(route).parameters.findIndex((p) => p.in === 'path' && p.name === resource.parameter)]
        if (given === undefined) return stop('the create\'s answer carries no key (no item in its body, no Location)')
        if (step === 'create') {
          key = given
          // The parents it was made under where none was made first (no create of theirs): the
          // chain's other steps name the same ones, not each its own sample (Vimeo's album).
          const sentPath = made.values.parameters
          planOf(route).parameters.forEach((p, i) => { if (p.in === 'path' && resource.parents.includes(p.name) && !(p.name in path)) path[p.name] = sentPath[i] })
          written = { body: valueIn(writtenBy(doc, validators, made.values), envelope), by: route }
          const elsewhere = answer.status === 201 && route === resource.operations.create ? strayLocation(resource, answer.headers.location, key, { ...path, [resource.parameter]: key }) : undefined
          const found = elsewhere === undefined ? undefined : fail('ensure_resource_availability', `${resource.name} ${jsonText(key)} made, and its Location names no such item: ${elsewhere}`, route)
          if (found !== undefined) return found
        } else if (alike(given, key) && keyIn(made.values.body, envelope) === undefined && !sameIdempotencyKey(made.request, sent.find((s) => s.step === 'create')!.request)) {
          // Only a key the server chose: two creates of the key a client gives may well be one, as
          // may two of one idempotency key (Stripe's, Mastodon's Idempotency-Key).
          const found = fail('unique_keys', `two creates answered with one key, ${jsonText(given)}`, route)
          if (found !== undefined) return found
        }
        continue
      }
      if (step === 'read') {
        if (deleted) {
          const removal = [...sent].reverse().find((s) => s.step === 'delete')!
          const found = ok(answer) && declares404(route) ? fail('use_after_free', `${resource.name} ${jsonText(key)} deleted (${removal.status}), and read all the same (${answer.status}); the read declares 404`, removal.route) : undefined
          if (found !== undefined) return found
          continue
        }
        if (answer.status === 404 || answer.status === 410) return fail('ensure_resource_availability', `${resource.name} ${jsonText(key)}, made by ${written!.by.method} ${written!.by.path}, read answered ${answer.status}`, creator) ?? stop(`read: answered ${answer.status}`)
        if (!ok(answer)) return stop(`read: answered ${answer.status}`)
        const item = itemOf(resource, answer)
        const schema = readSchema(resource, item)
        const differs = unwritten(doc, validators, schema, resource.property, written?.body, item)
        const found = differs.length > 0 ? fail('read_after_write', `${written!.by.method} ${written!.by.path} wrote what the read does not answer: ${differs.join('; ')}`, written!.by) : undefined
        if (found !== undefined) return found
        const kept = keptThrough(doc, schema, [resource.property ?? '', ...resource.parents], written?.leftOut ?? {}, item)
        const merged = kept.length > 0 ? fail('read_after_write', `${written!.by.method} ${written!.by.path} replaced it without what the read still answers as before, as if merged: ${kept.join('; ')}`, written!.by) : undefined
        if (merged !== undefined) return merged
        continue
      }
      // A change refused as the client's fault (4xx) did nothing: the chain goes on from what was
      // there, so that a refusal (its own violation, where the request was valid) hides no fault
      // of the steps after it. A server's failure may have done anything, and so may a 4xx of an
      // operation that declares no success (Petstore's DELETE /store/order/{orderId}: 400 and 404
      // only): the chain stops there.
      if (!ok(answer) && answer.status >= 400 && answer.status < 500 && route.responses.some((r) => /^2/.test(r.status))) {
        refused.push(`${step}: answered ${answer.status}, gone on from what was there before`)
        continue
      }
      if (!ok(answer)) return stop(`${step}: answered ${answer.status}`)
      if (step === 'delete') deleted = true
      // What a read answers next: a patch's properties over what was there (a merge patch's nulls
      // removing theirs: no value a read is held to); a replace's whole body, and what it left out
      // of what was there (a replace takes it away).
      else {
        const body = patches ? patched(made.values.body) : valueIn(writtenBy(doc, validators, made.values), envelope)
        const before = written?.body
        if (action === 'patch' && isObject(body) && made.values.media !== undefined && isMergePatch(made.values.media.type)) written = { body: mergePatch(before, body), by: route }
        else if (action === 'patch' && isObject(body) && isObject(before)) written = { body: { ...before, ...body }, by: route }
        else written = { body, by: route, ...(action === 'replace' && isObject(body) && isObject(before) && { leftOut: Object.fromEntries(Object.entries(before).filter(([name]) => !(name in body))) }) }
      }
    }
    return { answers, refused, sent, key, steps, path }
  }

  /** The path parameters of a route, in the order its template spells them (as routes.ts parsed them). */
  const namesOf = (route: RouteSpec): string[] => Object.values(route.pathNames)

  /**
   * A valid request of `route`, an operation outside the chains whose path names what a create
   * makes (POST /shelves/{shelfId}/labels), with that made first, judged by `judged`: the request
   * as sent with its answer's status, and its violations, each with every request that led to it;
   * or why it could not be sent; undefined when the run's bounds ran out.
   */
  const referring = async (route: RouteSpec, judged: Judge): Promise<{ steps: SentStep[], violations: SequenceViolation[] } | { note: string } | undefined> => {
    const first = await madeFirst(route.path, namesOf(route), 0)
    if (first === undefined) return undefined
    if (first.note !== undefined) return { note: first.note }
    const keys = await keysFirst(route, 0)
    if (keys === undefined) return undefined
    first.sent.push(...keys.sent)
    const made = requestOf(route, { path: first.path, withBody: route.body !== undefined, named: keys.named })
    if (made instanceof Error) return { note: `no valid request could be made (${made.message})` }
    const answer = await send(made.request)
    if (answer === undefined) return undefined
    const sent: SentStep = { step: 'request', route, request: made.request, secrets: made.secrets, ...(!(answer instanceof Error) && { status: answer.status }) }
    const steps = [...first.sent, sent]
    const violations = answer instanceof Error ? noAnswer(answer, enabled) : judged({ source: 'sequence' }, answer)
    if (answer instanceof Error && violations.length === 0) return { note: `no answer (${answer.message})` }
    return { steps, violations: violations.map((violation) => ({ ...violation, steps, route })) }
  }
  /** Whether a route's body names what a create makes, or its path does where that was not made first for it already. */
  const refersTo = (route: RouteSpec, pathMade = false): boolean => (!pathMade && namesOf(route).some((name) => ownerOf(route.path, name) !== undefined)) || namedIn(route).length > 0

  /**
   * What a route's path names besides its own resource (/shelves/{shelfId}/books/{bookId}: a
   * shelf, not a book, whose key its requests vary), made first: its path values by name and the
   * requests that made them, or why not; undefined when the run's bounds ran out.
   */
  const pathMadeFirst = async (route: RouteSpec): Promise<{ path: Record<string, unknown>, sent: SentStep[], note?: string } | undefined> =>
    await madeFirst(route.path, namesOf(route).filter((name) => ownerOf(route.path, name)?.item !== route.path), 0)

  /**
   * The fewest steps that still fail as `failing` did (the chain's check; or an answer's, by the
   * same operation and check): the steps between the first create and the last left out in runs
   * side by side, the longest first (all of them, then halves, down to one at a time), each kept
   * out while it still fails; within `budget` requests.
   */
  const shrink = async (resource: Resource, failing: SequenceViolation | ChainAnswerViolation, steps: ChainStep[], budget: { left: number }): Promise<SequenceViolation> => {
    const same = (ran: Ran | undefined): { violation: SequenceViolation, steps: ChainStep[] } | undefined => {
      if (!('chain' in failing)) return ran?.violation?.check === failing.check ? { violation: ran.violation, steps: ran.steps } : undefined
      const found = ran?.answers.find((v) => v.route === failing.route && v.check === failing.check)
      return found === undefined ? undefined : { violation: found, steps: found.chain }
    }
    let best: SequenceViolation = failing
    for (let length = steps.length - 2; length >= 1 && budget.left > 0; length = Math.floor(length / 2)) {
      // Runs of `length` steps side by side, from the one before the last step back.
      for (let end = steps.length - 1; end - length >= 1 && budget.left > 0;) {
        const from = end - length
        const again = await run(resource, [...steps.slice(0, from), ...steps.slice(end)])
        budget.left -= again?.sent.length ?? budget.left
        const found = same(again)
        if (found !== undefined) ({ steps, violation: best } = found)
        end = Math.min(from, steps.length - 1)
      }
    }
    return best
  }

  return { run, shrink, referring, refersTo, pathMadeFirst }
}
