import { createHash, randomUUID } from 'node:crypto'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import jsonPatch from 'fast-json-patch'
import { ItemConflictError, ItemGoneError, ItemNotFoundError, PatchConflictError, PreconditionFailedError } from '../../errors.ts'
import { jsonText, parseExactJson } from '../../http/json-body.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { responseFor, type Answer } from '../answers/responses.ts'
import { concreteType, kindOf, matchMedia } from '../requests/bodies.ts'
import { isJsonPatch } from '../requests/json-patch.ts'
import { isMergePatch, mergePatch } from '../requests/merge-patch.ts'
import type { HandlerInput } from '../routes/register.ts'
import { concretePath } from '../routes/path-template.ts'
import type { MediaSpec, ResponseSpec, RouteSpec } from '../routes/routes.ts'
import { examplesOf } from '../schemas/examples.ts'
import { matching, setApart, validSample } from '../schemas/samples.ts'
import { errorToMend, isObject, oneOfIn, schemaAt, tokensOf } from '../schemas/schema-at.ts'
import { derefSchema, writeOnlyIn, type JsonSchema } from '../schemas/schema.ts'
import type { Validators } from '../schemas/validation.ts'
import { answeredKey, bodyEnvelope, keyAlone, keyInPath, listIn, placeIn, propertiesOf, requiredIn, successJson, successOf, valueIn, type Action, type Inference, type Resource } from '../routes/resources.ts'
import { pageOf, pagingOf, tellPage } from './paging.ts'
import type { Item, State } from './state.ts'

// The mock's memory of what clients write (resources.ts says what is a resource): a create keeps
// the request's values, its readOnly properties filled (the key, valid as the property and as the
// item path's parameter; a timestamp; an enum's first value; a default), its writeOnly ones kept
// but never answered; a read answers what was written, a list what was created, a PUT replaces, a
// PATCH changes what it names (RFC 7396's merge patch, RFC 6902's JSON Patch, or a JSON object's properties), a delete
// removes; a key not there answers the declared 404. Every answer is shaped to its schema: the
// item placed in its envelope, a property its schema does not take given the schema's own value;
// one that cannot be made valid is answered as before, from the document.

/** What the stateless mock lends: its checks, samples and headers. A handler here answers undefined where the stateless one answers (what the state cannot shape). */
export interface Tools {
  validatorOf: (media: MediaSpec) => ValidateFunction
  sampled: (route: RouteSpec, response: ResponseSpec, media: MediaSpec) => unknown
  headersOf: (route: RouteSpec, response: ResponseSpec) => Record<string, string>
  pickMedia: (declared: MediaSpec[], accept: string) => MediaSpec | undefined
}

type Handler = (input: HandlerInput) => Answer | undefined
type Value = Record<string, unknown>

// Enough for an item a few dozen properties away from its answer's schema; each round is one small validation, once per item and schema.
const MENDING_ROUNDS = 64
const COUNTS = ['total', 'count', 'totalCount', 'total_count']
/** Whether the operation declares the status, itself or by its range (4XX). */
const declares = (route: RouteSpec, status: string): boolean => route.responses.some((r) => r.status === status || r.status === `${status[0]}XX`)
/** A header the answer declares, by its name in any case: as the document spells it, and its Header Object. */
const declaredHeader = (response: ResponseSpec | undefined, name: string) => Object.entries(response?.headers ?? {}).find(([declared]) => declared.toLowerCase() === name)

/**
 * RFC 6902: the item with the patch's operations applied, in order, all or none (fast-json-patch,
 * which refuses a path through an object's prototype). One that cannot be applied (an operation
 * RFC 6902 does not have, a `test` that fails, a path not there) or leaves no object is refused as
 * RFC 5789 has it, 409 Conflict, where the operation declares it; elsewhere undefined: answered
 * as before, from the document, and nothing changed.
 */
function jsonPatched (route: RouteSpec, item: Value, operations: unknown[]): Value | undefined {
  let changed: unknown
  let failure: string | undefined
  // The library copies through JSON, which has no bigint (an int64 past 2^53): each is an object
  // of a key no client can know while the patch is applied, and a bigint again after.
  const tag = `bigint ${randomUUID()}`
  const swap = (value: unknown, of: (inner: unknown) => unknown): unknown => Array.isArray(value) ? value.map(of) : isObject(value) ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, of(inner)])) : value
  const hidden = (value: unknown): unknown => typeof value === 'bigint' ? { [tag]: value.toString() } : swap(value, hidden)
  const shown = (value: unknown): unknown => isObject(value) && typeof value[tag] === 'string' ? BigInt(value[tag]) : swap(value, shown)
  try {
    changed = shown(jsonPatch.applyPatch(hidden(item), hidden(operations) as jsonPatch.Operation[], true, true, true).newDocument)
  } catch (err) {
    failure = err instanceof jsonPatch.JsonPatchError ? `${err.name} at operation ${err.index ?? 0}` : 'a path through an object\'s prototype'
  }
  if (failure === undefined && !isObject(changed)) failure = 'the item would be no object'
  if (failure === undefined) return changed as Value
  if (declares(route, '409')) throw new PatchConflictError(failure)
  return undefined
}

/** Whether a key made up is valid as the item's property and, spelled in the path, as its parameter. */
function keyCheck (doc: OpenApiDocument, resource: Resource, validators: Validators): { check: (key: unknown) => boolean, inPath: (key: unknown) => boolean, schema: any, enums: unknown[], patterns: string[], maxLength?: number, sample: unknown } {
  const property = derefSchema(doc, resource.property === undefined ? undefined : propertiesOf(doc, resource.schema)[resource.property]) ?? {}
  const declared = derefSchema(doc, Object.values(resource.operations).flatMap((route) => route.parameters).find((p) => p.in === 'path' && p.name === resource.parameter)?.schema) ?? {}
  // A path parameter that lists keys (DaniWeb's /groups/{ID}, an array of int32): one key is one item of it.
  const parameter = [declared.type].flat().includes('array') ? derefSchema(doc, declared.items) ?? {} : declared
  const byProperty = validators.response(property)
  // A number in the path is checked as the number it is read as (text is taken as an int64 unbounded).
  const numeric = [parameter.type].flat().some((type) => type === 'integer' || type === 'number')
  const byParameter = numeric ? validators.response(parameter) : validators.text(parameter)
  const inPath = (key: unknown) => (typeof key === 'string' || typeof key === 'number') && (numeric ? String(key).trim() !== '' && byParameter(Number(key)) : byParameter(String(key)))
  // A key's schemas and their parts (Lucidtech's transitionId: one of two patterns; AWS's: an allOf of the key and its description).
  const parts = [property, parameter].flatMap((schema) => [schema, ...schema.allOf ?? [], ...schema.anyOf ?? [], ...schema.oneOf ?? []]).map((schema) => derefSchema(doc, schema) ?? {})
  const patterns = parts.map((schema) => schema.pattern).filter((pattern): pattern is string => typeof pattern === 'string')
  const lengths = parts.map((schema) => schema.maxLength).filter((length): length is number => typeof length === 'number')
  return {
    check: (key) => byProperty(key) && inPath(key),
    inPath,
    schema: property,
    enums: [...property.enum ?? [], ...parameter.enum ?? []],
    patterns,
    maxLength: lengths.length === 0 ? undefined : Math.min(...lengths),
    // The document's own value (the same each time it is made): what its clients put in a path for any item.
    sample: validSample(doc, property, byProperty, { direction: 'response' })?.value
  }
}

export function stateful (doc: OpenApiDocument, { bindings }: Inference, state: State, validators: Validators, tools: Tools): (route: RouteSpec) => Handler | undefined {
  const keyChecks = new Map<Resource, ReturnType<typeof keyCheck>>()
  const keyOf = (resource: Resource) => keyChecks.get(resource) ?? keyChecks.set(resource, keyCheck(doc, resource, validators)).get(resource)!

  /** Each collection starts from the document's own examples of its item: a read's, a create's, a list's. */
  const seed = (resource: Resource) => (): Array<[string, Value]> => {
    const out: Array<[string, Value]> = []
    const add = (value: unknown) => {
      // An example of an item whose key is the path's alone names no key: none is kept.
      const key = isObject(value) && resource.property !== undefined ? value[resource.property] : undefined
      if (typeof key === 'string' || typeof key === 'number') out.push([String(key), structuredClone(value as Value)])
    }
    for (const action of ['read', 'create', 'replace'] as const) {
      const found = successJson(resource.operations[action])
      const where = found === undefined ? undefined : placeIn(doc, resource, found.media.schema)
      if (where === undefined) continue
      for (const { value } of examplesOf(doc, found!.media)) add(valueIn(value, where.envelope))
    }
    const list = successJson(resource.operations.list)
    const listed = list === undefined ? undefined : listIn(doc, list.media.schema)
    if (listed !== undefined) {
      for (const { value } of examplesOf(doc, list!.media)) {
        const items = valueIn(value, listed.envelope)
        if (Array.isArray(items)) items.forEach(add)
      }
    }
    return out
  }
  const collectionOf = (resource: Resource, params: Value) => {
    const scope = [resource.item, ...resource.parents.map((name) => typeof params[name] === 'string' ? params[name] : JSON.stringify(params[name]))].join('\0')
    return { scope, items: state.collection(scope, seed(resource)) }
  }

  /** A key for a new item, valid as its property and as the path's parameter: the next number, or a UUID, or one drawn from its pattern, or a sample. */
  const newKey = (resource: Resource, items: Map<string, Item>): unknown => {
    const { check, schema, enums, patterns, maxLength, sample } = keyOf(resource)
    for (const value of enums) if (!items.has(String(value)) && check(value)) return value
    const types = [schema.type].flat()
    if (types.includes('integer') || types.includes('number')) {
      const first = Math.max(typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1, 1)
      let next = first
      for (const key of items.keys()) if (Number(key) >= next) next = Math.floor(Number(key)) + 1
      // Past 2^53 (after a key a client put at 2^53 - 1: NetBox's, by the verifier) a double would
      // count one key twice: the first free one instead.
      if (!Number.isSafeInteger(next)) for (next = first; items.has(String(next)); next++);
      if (check(next)) return next
    }
    for (let n = items.size + 1; n <= items.size + 100; n++) if (!items.has(String(n)) && check(String(n))) return String(n)
    const uuid = randomUUID()
    if (check(uuid)) return uuid
    // Keys of a pattern of their own (bk_[a-z0-9]{8}), as a server's own are; not the sample, which
    // a client (or a verifier beside it) puts in a path for any item, and would change another's.
    for (const pattern of patterns) {
      for (let i = 0; i < 5; i++) {
        const made = matching(pattern, 'drawn', maxLength)
        if (made !== undefined && made !== sample && !items.has(made) && check(made)) return made
      }
    }
    // Else the sample, or, taken, its last characters made a count: another key of its length
    // (QLDB's ExportId, 22 characters of a pattern, drawn too short and too long above).
    if (sample !== undefined && !items.has(String(sample)) && check(sample)) return sample
    if (typeof sample === 'string') {
      for (let n = 1; n <= 100; n++) {
        const counted = `${sample.slice(0, Math.max(0, sample.length - String(n).length))}${n}`
        if (!items.has(counted) && check(counted)) return counted
      }
    }
    return randomUUID()
  }

  /** The value a property takes when the server sets it: its default, const, first enum value, the time, else a sample. */
  const filled = (schema: unknown): unknown => {
    const s = derefSchema(doc, schema) ?? {}
    if (s.default !== undefined) return structuredClone(s.default)
    if (s.const !== undefined) return s.const
    if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.find((v: unknown) => v !== null) ?? s.enum[0]
    if (s.format === 'date-time') return new Date().toISOString()
    if (s.format === 'date') return new Date().toISOString().slice(0, 10)
    return validSample(doc, schema as JsonSchema, validators.response(s), { direction: 'response' })?.value
  }
  /** The item as kept: the client's values, but for readOnly ones (the server's: `kept`'s, else filled), what the answer requires, and defaults. */
  const complete = (resource: Resource, body: Value, kept: Value | undefined): Value => {
    const properties = propertiesOf(doc, resource.schema)
    const required = requiredIn(doc, resource.schema)
    const out: Value = {}
    for (const [name, value] of Object.entries(body)) if (derefSchema(doc, properties[name])?.readOnly !== true) out[name] = value
    for (const [name, schema] of Object.entries(properties)) {
      const s = derefSchema(doc, schema) ?? {}
      if (s.readOnly === true && kept !== undefined && name in kept) out[name] = kept[name]
      if (name in out || s.writeOnly === true || (s.readOnly !== true && !required.has(name) && s.default === undefined)) continue
      const value = filled(schema)
      if (value !== undefined) out[name] = value
    }
    return out
  }

  /** The properties an item names its parents by, as their path parameters (a book's shelfId), where the client does not give them: the path's values, as their schemas take them. */
  const parentsOf = (resource: Resource, params: Value, body: Value): Value => {
    const properties = propertiesOf(doc, resource.schema)
    const out: Value = {}
    for (const name of resource.parents) {
      const schema = derefSchema(doc, properties[name])
      if (schema === undefined || (schema.readOnly !== true && name in body)) continue
      const value = [params[name], String(params[name]), Number(params[name])].find((each) => validators.response(schema)(each))
      if (value !== undefined) out[name] = value
    }
    return out
  }

  /**
   * The item as an answer shows it: in its envelope, writeOnly properties left out, and each value
   * its schema does not take mended (below); where it cannot be, the sample's members with the
   * item's over them (InfluxDB's dashboard, which both branches of its oneOf take, is told apart
   * by the sample's cells). Kept with the item, by schema.
   */
  const shaped = (item: Item, schema: JsonSchema, place: { envelope: string[] }, sample: () => unknown, validate: ValidateFunction): { value: unknown, text: string } | null => {
    const cached = item.answers.get(schema)
    if (cached !== undefined) return cached
    const fallback = sample()
    const sampled = valueIn(fallback, place.envelope)
    const out = mended(wrap(place.envelope, structuredClone(item.value), fallback), schema, place, fallback, validate) ??
      (isObject(sampled) && isObject(item.value) ? mended(wrap(place.envelope, { ...structuredClone(sampled), ...structuredClone(item.value) }, fallback), schema, place, fallback, validate, true) : undefined)
    const answer = out === undefined ? null : { value: out, text: jsonText(out) }
    item.answers.set(schema, answer)
    return answer
  }

  /**
   * Of an object several branches of a oneOf take (`passing`, their indexes), a member that sets
   * them apart, to leave out: one another of them requires and the branch that requires least
   * does not name (Vercel's deployment, read whole or as its public part alone: each whole one is
   * a public part too). Undefined where there is none.
   */
  const apartIn = (at: unknown, value: unknown, passing: unknown): string | undefined => {
    const branches = oneOfIn(doc, at)
    if (!isObject(value) || branches === undefined || !Array.isArray(passing)) return undefined
    const [kept, ...others] = passing.map((index) => branches[index]).sort((a, b) => requiredIn(doc, a).size - requiredIn(doc, b).size)
    const named = new Set([...requiredIn(doc, kept), ...Object.keys(propertiesOf(doc, kept))])
    return Object.keys(value).find((name) => !named.has(name) && others.some((other) => requiredIn(doc, other).has(name)))
  }

  /**
   * `made` valid against `schema`, or undefined. One error at a time (the validators stop at the
   * first): a value of another type than asked is spelled as asked where it is the same value
   * (Jira's ids: integers read, strings in a create's answer), else left out; a property not
   * allowed too; a required one missing is the sample's at the same place (in a list's item past
   * the sample's, as in the sample's first item), else a value of its own schema (the sample is of
   * another branch of a oneOf); an object several branches of a oneOf take loses what sets them
   * apart (apartIn). `bySample`: a value not taken is the sample's at the same place,
   * once, before it is left out. Nothing outside the envelope's item is changed.
   */
  const mended = (made: unknown, schema: JsonSchema, place: { envelope: string[] }, fallback: unknown, validate: ValidateFunction, bySample = false): unknown => {
    const restored = new Set<string>()
    const within = (tokens: string[]) => tokens.length > place.envelope.length && place.envelope.every((name, i) => tokens[i] === name)
    for (let pointer = writeOnlyIn(doc, schema, made); pointer !== undefined && within(tokensOf(pointer)); pointer = writeOnlyIn(doc, schema, made)) removeAt(made, tokensOf(pointer))
    for (let round = 0; round < MENDING_ROUNDS && !validate(made); round++) {
      const error = errorToMend(validate.errors)
      if (error === undefined) break
      const tokens = tokensOf(error.instancePath)
      const apart = error.keyword === 'oneOf' ? apartIn(schemaAt(doc, schema, made, tokens), valueIn(made, tokens), error.params.passingSchemas) : undefined
      // Nothing to leave out: a member that tells them apart, put in (samples.ts).
      const told = error.keyword === 'oneOf' && apart === undefined ? setApart(doc, schema, made, error) : undefined
      if (told !== undefined) {
        if (!within(tokensOf(told.pointer)) || !setAt(made, tokensOf(told.pointer), told.by)) break
        continue
      }
      const target = apart !== undefined ? [...tokens, apart] : error.keyword === 'additionalProperties' ? [...tokens, String(error.params.additionalProperty)] : error.keyword === 'required' ? [...tokens, String(error.params.missingProperty)] : tokens
      if (!within(target)) break
      const respelled = error.keyword === 'type' ? spelledAs(valueIn(made, target), [error.params.type].flat().map(String)) : undefined
      if (apart !== undefined) removeAt(made, target)
      else if (respelled !== undefined) setAt(made, target, respelled)
      else if (error.keyword !== 'required') {
        const pointer = JSON.stringify(target)
        if (!bySample || restored.has(pointer) || !setAt(made, target, valueIn(fallback, target))) removeAt(made, target)
        restored.add(pointer)
      } else {
        const own = schemaAt(doc, schema, made, target)
        if (!setAt(made, target, valueIn(fallback, target) ?? valueIn(fallback, target.map((token, i) => Array.isArray(valueIn(made, target.slice(0, i))) ? '0' : token)) ?? (own === undefined ? undefined : filled(own)))) break
      }
    }
    return validate(made) ? made : undefined
  }

  // Where each answer's item is, found once per media type: a read is a lookup and a cached body.
  const places = new WeakMap<MediaSpec, ReturnType<typeof placeIn>>()
  const placeOf = (media: MediaSpec, resource: Resource) => {
    if (!places.has(media)) places.set(media, media.schema === undefined ? undefined : placeIn(doc, resource, media.schema))
    return places.get(media)
  }

  /**
   * An answer of `route` with the item; undefined where the item cannot be shaped for it. `keyless`:
   * where the answer holds no item, its key alone where it is that, else the document's sample (a
   * create's that names it by its Location alone).
   */
  const itemAnswer = (route: RouteSpec, resource: Resource, item: Item, accept: string, status?: number, keyless = false): Answer | undefined => {
    const response = status === undefined ? successOf(route) : responseFor(route.responses, status)
    if (response === undefined) return undefined
    const code = status ?? statusOf(response)
    const picked = tools.pickMedia(response.media, accept)
    // A type declared twice (Zuora's application/json with an example, and with its charset and the
    // schema): the item answered in the one whose schema shapes it, not as the example.
    const media = picked !== undefined && picked.schema === undefined ? response.media.find((m) => m.type === picked.type && m.schema !== undefined) ?? picked : picked
    const headers = withEntityTag(response, tools.headersOf(route, response), item)
    if (media === undefined || code === 204 || code === 304) return { status: code, headers }
    // JSON only: an item asked for in XML is answered from the document, as before.
    const json = kindOf(concreteType(media.type)) === 'json'
    const place = json ? placeOf(media, resource) : undefined
    if (place === undefined && json && keyless) {
      // An answer that is the key alone (LUIS's new app's GUID) answers the item's own.
      const key = keyAlone(doc, media.schema, item.value[resource.property!])
      const body = key !== undefined && tools.validatorOf(media)(key) ? key : tools.sampled(route, response, media)
      return { status: code, body: jsonText(body), headers, contentType: concreteType(media.type) }
    }
    const body = place === undefined ? null : shaped(item, media.schema!, place, () => tools.sampled(route, response, media), tools.validatorOf(media))
    return body === null ? undefined : { status: code, body: body.text, headers, contentType: concreteType(media.type) }
  }

  /**
   * RFC 9110's conditions on the item a request names, where the operation declares the answer
   * they call for: a change (PUT, PATCH, DELETE) whose If-Match names none of its entity tags is
   * refused 412; a read whose If-None-Match names one is answered 304. Else the request goes on.
   */
  const conditional = (route: RouteSpec, resource: Resource, action: Action, input: HandlerInput): Answer | undefined => {
    const { params, headers } = input
    const read = action === 'read' && headers['if-none-match'] !== undefined && declares(route, '304')
    const change = ['replace', 'patch', 'delete'].includes(action) && headers['if-match'] !== undefined && declares(route, '412')
    if (!read && !change) return undefined
    const key = String(keyNamed(route, resource, input))
    const item = collectionOf(resource, params as Value).items.get(key)
    if (item === undefined) return undefined
    const tag = entityTag(item)
    const names = (field: unknown) => String(field).split(',').map((each) => each.trim().replace(/^W\//, '')).some((each) => each === '*' || each === tag)
    if (change && !names(headers['if-match'])) throw new PreconditionFailedError(resource.name, key, tag)
    return read && names(headers['if-none-match']) ? itemAnswer(route, resource, item, '', 304) : undefined
  }

  /** The key a request names: its path's; a replace through the collection's (the Petstore's PUT /pet), its body's. */
  const keyNamed = (route: RouteSpec, resource: Resource, { params, body }: HandlerInput): unknown =>
    keyInPath(resource, route) ? (params as Value)[resource.parameter] : isObject(body) ? body[resource.property!] : undefined

  const notThere = (route: RouteSpec, resource: Resource, key: string): Answer | undefined => {
    // Only where the document says so: a 404 of its own (or 4XX), else a 410 (Pendo's reads
    // declare only that); elsewhere answered as before.
    if (declares(route, '404')) throw new ItemNotFoundError(resource.name, key)
    if (declares(route, '410')) throw new ItemGoneError(resource.name, key)
    return undefined
  }

  const act: Record<Action, (route: RouteSpec, resource: Resource, input: HandlerInput) => Answer | undefined> = {
    create (route, resource, { body: sent, params, headers }) {
      // A create that takes no body (POST /projects/7/triggers), or whose optional body is not
      // sent (Stripe's coupons), or a value no object (CircleCI's checkout key, made of its type's
      // name; a list PeerTube's schema of no type takes), makes an item of the server's values alone.
      const body = isObject(sent) ? sent : {}
      const { scope, items } = collectionOf(resource, params as Value)
      // The client's key, unless the server's to give, or one no path could carry (then the server gives one).
      // An item a POST creates holds its key (resources.ts): how else would its client learn it.
      const property = resource.property!
      const given = derefSchema(doc, propertiesOf(doc, resource.schema)[property])?.readOnly === true || !keyOf(resource).inPath(body[property]) ? undefined : body[property]
      if (given !== undefined && items.has(String(given)) && route.responses.some((r) => r.status === '409')) throw new ItemConflictError(resource.name, String(given))
      const key = given ?? newKey(resource, items)
      const item = state.put(scope, items, String(key), { ...complete(resource, body, undefined), ...parentsOf(resource, params as Value, body), [property]: key })
      // An answer that holds no item (eBay's campaigns: an empty object) still names it, by its Location.
      const answer = itemAnswer(route, resource, item, String(headers.accept ?? ''), undefined, true)
      if (answer === undefined) return undefined
      // Whether its body gives no key, read as a client reads it: asked only where no Location is declared.
      const keyless = (): boolean => String(answeredKey(doc, resource, route, typeof answer.body === 'string' ? parseExactJson(answer.body) : undefined)) !== String(key)
      // The item's own path: Django REST framework's ends with a slash, as its collection's does.
      return withLocation(route, answer, concretePath(resource.item, { ...params as Value, [resource.parameter]: key }), headers.host, keyless)
    },
    read (route, resource, { params, headers }) {
      const key = String((params as Value)[resource.parameter])
      const item = collectionOf(resource, params as Value).items.get(key)
      return item === undefined ? notThere(route, resource, key) : itemAnswer(route, resource, item, String(headers.accept ?? ''))
    },
    list (route, resource, { params, query, headers }) {
      const found = successJson(route)
      const listed = found === undefined ? undefined : listIn(doc, found.media.schema)
      const place = listed === undefined ? undefined : placeIn(doc, resource, listed.items)
      if (found === undefined || listed === undefined || place === undefined) return undefined
      const { response, media } = found
      const max = typeof listed.array.maxItems === 'number' ? listed.array.maxItems : Infinity
      const sample = () => valueIn(tools.sampled(route, response, media), listed.envelope)?.[0]
      const validate = validators.response(listed.items)
      const all = [...collectionOf(resource, params as Value).items.entries()]
      const paging = pagingOf(route)
      const asked = isObject(query) ? query : {}
      const { from, to, next } = paging === undefined ? { from: 0, to: Math.min(all.length, max), next: undefined } : pageOf(paging, asked, all.map(([key]) => key), max)
      const values = all.slice(from, to).map(([, item]) => shaped(item, listed.items, place, sample, validate)?.value).filter((value) => value !== undefined)
      const body = wrap(listed.envelope, values, tools.sampled(route, response, media))
      if (isObject(body)) {
        // An envelope's count says how many there are, where it is a number its schema takes.
        for (const name of COUNTS) if (typeof body[name] === 'number') body[name] = all.length
        tellPage(doc, body, found.media.schema!, paging, next, (page) => {
          const path = `${concretePath(route.path, params as Value)}?${queryText({ ...asked, ...page })}`
          return { path, url: `http://${String(headers.host)}${path}` }
        })
      }
      if (!tools.validatorOf(media)(body)) return undefined
      return { status: statusOf(response), body: jsonText(body), headers: tools.headersOf(route, response), contentType: concreteType(media.type) }
    },
    replace (route, resource, input) {
      const { body: sent, params, headers } = input
      // One that takes no body (PUT /bookmarks/{itemId}), or whose optional body is not sent, or a
      // value no object (OPA's policy module, in text), makes an item of the server's values alone,
      // as a create does.
      const body = isObject(sent) ? sent : {}
      const { scope, items } = collectionOf(resource, params as Value)
      // A body that names no item (PUT /pet without its id) is answered from the document, as before.
      const key = keyNamed(route, resource, input)
      if (key === undefined) return undefined
      const old = items.get(String(key))
      if (old === undefined && resource.operations.create !== undefined) {
        const missing = notThere(route, resource, String(key))
        if (missing !== undefined) return missing
      }
      // The path's value as the property takes it: a path's integer may be the item's string, or the other way.
      const { check } = keyOf(resource)
      const kept = [key, String(key), Number(key)].find((each) => check(each)) ?? key
      const item = state.put(scope, items, String(key), { ...complete(resource, body, old?.value), ...parentsOf(resource, params as Value, body), ...keyed(resource, kept) })
      const created = old === undefined && route.responses.some((r) => r.status === '201')
      return itemAnswer(route, resource, item, String(headers.accept ?? ''), created ? 201 : undefined)
    },
    patch (route, resource, { body, params, headers }) {
      const { scope, items } = collectionOf(resource, params as Value)
      const key = String((params as Value)[resource.parameter])
      const old = items.get(key)
      // An item that is not there, whatever the body would have changed.
      if (old === undefined) return notThere(route, resource, key)
      const type = concreteType(String(headers['content-type'] ?? '')).toLowerCase()
      const operations = Array.isArray(body) && isJsonPatch(doc, matchMedia(route.body?.media ?? [], type))
      if (!isObject(body) && !operations) return undefined
      const changed = operations ? jsonPatched(route, old.value, body) : isMergePatch(type) ? mergePatch(old.value, body) as Value : { ...old.value, ...body as Value }
      if (changed === undefined) return undefined
      const item = state.put(scope, items, key, { ...complete(resource, changed, old.value), ...keyed(resource, resource.property === undefined ? undefined : old.value[resource.property]) })
      return itemAnswer(route, resource, item, String(headers.accept ?? ''))
    },
    delete (route, resource, { params, headers }) {
      const { scope, items } = collectionOf(resource, params as Value)
      const key = String((params as Value)[resource.parameter])
      const old = items.get(key)
      if (old === undefined) return notThere(route, resource, key)
      state.delete(scope, items, key)
      return itemAnswer(route, resource, old, String(headers.accept ?? ''))
    }
  }

  return (route) => {
    const bound = bindings.get(route.operationId)
    if (bound === undefined) return undefined
    const { resource, action } = bound
    // A body that holds the item in an envelope, as the answers do (JSON:API's {"data": …}): the item
    // within it; an object without it (Square's examples, {"request_body": …}) holds none of the item's values.
    const envelope = bodyEnvelope(doc, resource, route)
    const unwrapped = envelope.length === 0 ? (input: HandlerInput) => input : (input: HandlerInput) => ({ ...input, body: isObject(input.body) ? valueIn(input.body, envelope) ?? {} : input.body })
    return (input) => {
      const inner = unwrapped(input)
      return conditional(route, resource, action, inner) ?? act[action](route, resource, inner)
    }
  }
}

const statusOf = (response: ResponseSpec): number => response.status === '2XX' || response.status === 'default' ? 200 : Number(response.status)

/** `value` placed where an envelope holds it, within the sample of the envelope. */
function wrap (envelope: string[], value: unknown, sample: unknown): unknown {
  if (envelope.length === 0) return value
  return { ...(isObject(sample) ? sample : {}), [envelope[0]]: value }
}

/** Leaves out what is at `tokens`: a property deleted, an array's item spliced out. */
function removeAt (root: unknown, tokens: string[]): void {
  const parent: any = valueIn(root, tokens.slice(0, -1))
  const last = tokens.at(-1)!
  if (Array.isArray(parent)) parent.splice(Number(last), 1)
  else if (parent !== null && typeof parent === 'object') delete parent[last]
}

/** `value` as one of `types` spells it where it is the same value (a number as its digits, digits as their number); else undefined. */
function spelledAs (value: unknown, types: string[]): unknown {
  if (types.includes('string') && (typeof value === 'number' || typeof value === 'bigint')) return String(value)
  if (typeof value !== 'string') return undefined
  if (types.includes('integer') && /^-?(0|[1-9]\d*)$/.test(value)) return Number.isSafeInteger(Number(value)) ? Number(value) : BigInt(value)
  if (types.includes('number') && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value) && Number.isFinite(Number(value))) return Number(value)
  return undefined
}

/** Sets what is at `tokens` to a copy of `value`; false where it cannot (no value, or no object to hold it). */
function setAt (root: unknown, tokens: string[], value: unknown): boolean {
  const parent: any = valueIn(root, tokens.slice(0, -1))
  if (value === undefined || parent === null || typeof parent !== 'object') return false
  parent[tokens.at(-1)!] = structuredClone(value)
  return true
}

/** A query's scalar values (a list's each), as a link carries them. */
function queryText (query: Value): string {
  const text = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) for (const each of [value].flat()) if (['string', 'number', 'boolean', 'bigint'].includes(typeof each)) text.append(name, String(each))
  return text.toString()
}

/** An item's entity tag (RFC 9110 §8.8.3): strong, from what is kept of it, so that any change gives another. */
const entityTag = (item: Item): string => `"${createHash('sha256').update(jsonText(item.value)).digest('base64url').slice(0, 22)}"`

/** The answer's headers with the item's entity tag, where the answer declares an ETag: the sample's would name nothing. */
function withEntityTag (response: ResponseSpec, headers: Record<string, string>, item: Item): Record<string, string> {
  const declared = declaredHeader(response, 'etag')
  return declared === undefined ? headers : { ...headers, [declared[0]]: entityTag(item) }
}

/** The item's key as its property holds it; nothing for an item whose key is the path's alone. */
const keyed = (resource: Resource, key: unknown): Value => resource.property === undefined ? {} : { [resource.property]: key }

/**
 * A create's answer with a Location naming the item: where the document declares one, absolute
 * where its schema asks for a URI; undeclared, where the answer's body gives no key (`keyless`:
 * eBay's feed tasks, answered 202 with no body), the one way left for a client to learn it.
 */
function withLocation (route: RouteSpec, answer: Answer, path: string, host: unknown, keyless: () => boolean): Answer {
  const response = responseFor(route.responses, answer.status)
  const declared = declaredHeader(response, 'location')
  if (declared === undefined) return keyless() ? { ...answer, headers: { ...answer.headers, location: path } } : answer
  const absolute = declared[1].schema?.format === 'uri' && typeof host === 'string'
  return { ...answer, headers: { ...answer.headers, [declared[0]]: absolute ? `http://${host}${path}` : path } }
}
