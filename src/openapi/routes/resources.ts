import type { OpenApiDocument } from '../document/document.ts'
import { concreteType, kindOf } from '../requests/bodies.ts'
import { shapeOf, type MediaSpec, type ResponseSpec, type RouteSpec } from './routes.ts'
import { derefSchema, type JsonSchema } from '../schemas/schema.ts'

// The resources a document describes, inferred from its paths with no configuration: a
// collection path that creates (POST /orders) or lists, and its item path, the collection's
// path and one parameter (/orders/{orderId}), that reads, replaces (PUT), patches (PATCH, or a
// POST that answers the item) and deletes; or an item path created by PUT with its key in the
// path (PUT /products/{sku}); a collection's PUT whose body holds the key replaces, where the
// item path has no PUT (the Petstore's PUT /pet). A collection under a parent (/customers/{customerId}/addresses)
// holds each parent's items apart. The key is the item's property named as the path's
// parameter, `id`, `{name}Id` or `{name}_id`; an item made by PUT may hold none, its key the
// path's alone (PUT /projects/7/tasks/{taskKey} of {"title": …}); an answer may wrap the item in an envelope
// ({ "data": item }, { "items": [item] }). The mock remembers what clients write to these
// (mock/stateful.ts), and the verifier follows them in sequences of requests
// (verify/sequences.ts).

export type Action = 'create' | 'read' | 'list' | 'replace' | 'patch' | 'delete'

export interface Resource {
  /** The collection's last segment, as the document spells it: orders. */
  name: string
  /** The item path as written: /customers/{customerId}/addresses/{addressId}. */
  item: string
  /** The item path's parameter that is the key. */
  parameter: string
  /** The item's property that holds the key; none where its key is the path's alone (an item made by PUT). */
  property?: string
  /** The path parameters before the key: each value of them is a collection of its own. */
  parents: string[]
  /** The item's schema, as the answers that carry one declare it. */
  schema: JsonSchema
  /** The operations bound to it, by what each does. */
  operations: Partial<Record<Action, RouteSpec>>
}

/** Where an answer's item is in its body: the item itself ([]), or under a property (['data']). */
export type Envelope = string[]

export interface Inference {
  resources: Resource[]
  /** Each bound operation: its resource, what it does, where its answer's item or list is. */
  bindings: Map<string, { resource: Resource, action: Action }>
  /** The item paths that look like resources but are not one, and why. */
  skipped: string[]
}

const SEGMENT_PARAMETER = /^\{([^{}]+)\}$/

/**
 * A path as a resource's segments read it, without the slash that ends it: Django REST framework
 * ends every path so (`/items/{id}/`), FastAPI its collections (`/items/`, `/items/{item_id}`).
 */
export const bare = (path: string): string => path.length > 1 ? path.replace(/\/$/, '') : path

const ITEM_ACTIONS: Record<string, Action> = { GET: 'read', PUT: 'replace', PATCH: 'patch', DELETE: 'delete' }

/** orders → order; addresses → address; categories → category; people and status stay as written. */
export function singular (name: string): string {
  if (/ies$/i.test(name)) return name.slice(0, -3) + 'y'
  if (/(ss|sh|ch|x|z)es$/i.test(name)) return name.slice(0, -2)
  if (/[^siu]s$/i.test(name)) return name.slice(0, -1)
  return name
}

/** A schema's object properties, its allOf's too. */
export function propertiesOf (doc: OpenApiDocument, schema: unknown, seen = new Set<unknown>()): Record<string, any> {
  const s = derefSchema(doc, schema)
  if (s === null || typeof s !== 'object' || seen.has(s)) return {}
  seen.add(s)
  return Object.assign({}, ...(Array.isArray(s.allOf) ? s.allOf : []).map((part: unknown) => propertiesOf(doc, part, seen)), s.properties ?? {})
}

/** The names a schema requires, its allOf's too: a part may require what another declares. */
export function requiredIn (doc: OpenApiDocument, schema: unknown, seen = new Set<unknown>()): Set<string> {
  const s = derefSchema(doc, schema)
  if (s === null || typeof s !== 'object' || seen.has(s)) return new Set()
  seen.add(s)
  const parts = (Array.isArray(s.allOf) ? s.allOf : []).flatMap((part: unknown) => [...requiredIn(doc, part, seen)])
  return new Set<string>([...(Array.isArray(s.required) ? s.required : []), ...parts])
}

// An operation's success, found once: its first 2xx, else 2XX, else default (an operation that declares only that).
const successes = new WeakMap<RouteSpec, ResponseSpec | undefined>()
export function successOf (route: RouteSpec): ResponseSpec | undefined {
  if (!successes.has(route)) successes.set(route, route.responses.find((r) => /^2\d\d$/.test(r.status)) ?? route.responses.find((r) => r.status === '2XX') ?? route.responses.find((r) => r.status === 'default'))
  return successes.get(route)
}

/**
 * The JSON media type of a success answer: the operation's first 2xx (or default) that carries
 * JSON, or a range the mock answers in JSON (Clever Cloud's creates, declared in any type at all).
 */
export function successJson (route: RouteSpec | undefined): { response: ResponseSpec, media: MediaSpec } | undefined {
  for (const response of route?.responses ?? []) {
    if (!response.status.startsWith('2') && response.status !== 'default') continue
    const media = response.media.find((m) => kindOf(concreteType(m.type)) === 'json' && m.schema !== undefined)
    if (media !== undefined) return { response, media }
  }
  return undefined
}

/** The key's property among `properties`: the parameter's own name, id, {name}Id or {name}_id (in any case), of a type a path can carry. */
function keyIn (doc: OpenApiDocument, properties: Record<string, any>, parameter: string, name: string): string | undefined {
  // A single value (not a list or an object, through allOf too: AWS's, an allOf of an object and
  // its description), of text or a number; one that says nothing of its type is taken as text.
  const scalar = (property: unknown) => shapeOf(doc, property) === 'primitive' && [derefSchema(doc, property)?.type ?? 'string'].flat().some((type: string) => ['string', 'integer', 'number'].includes(type))
  const names = Object.keys(properties).filter((n) => scalar(properties[n]))
  const one = singular(name)
  const stem = parameter.replace(/[-_]?id$/i, '')
  for (const wanted of [parameter, 'id', `${one}Id`, `${one}_id`, `${stem}Id`, `${stem}_id`, stem]) {
    const found = names.find((n) => n.toLowerCase() === wanted.toLowerCase())
    if (found !== undefined && wanted !== '') return found
  }
  return undefined
}

/** What is at a path within a value (an envelope's, a pointer's tokens); undefined where nothing is. */
export const valueIn = (value: unknown, path: string[]): any => path.reduce<any>((at, name) => at !== null && typeof at === 'object' ? at[name] : undefined, value)

/**
 * Where the item is in an answer's schema, and its key: the schema itself, the first of its
 * branches that holds one (a oneOf or anyOf: Stripe's read answers a customer or a deleted one),
 * or one property of it (an envelope).
 */
export function itemIn (doc: OpenApiDocument, schema: unknown, parameter: string, name: string, seen = new Set<unknown>()): { envelope: Envelope, property: string, schema: JsonSchema } | undefined {
  const resolved = derefSchema(doc, schema)
  if (seen.has(resolved)) return undefined
  seen.add(resolved)
  const own = propertiesOf(doc, schema)
  const property = keyIn(doc, own, parameter, name)
  if (property !== undefined) return { envelope: [], property, schema: resolved }
  for (const branch of [resolved?.oneOf, resolved?.anyOf].flatMap((branches) => Array.isArray(branches) ? branches : [])) {
    const found = itemIn(doc, branch, parameter, name, seen)
    if (found !== undefined) return found
  }
  for (const [wrapper, inner] of Object.entries(own)) {
    const key = keyIn(doc, propertiesOf(doc, inner), parameter, name)
    if (key !== undefined) return { envelope: [wrapper], property: key, schema: derefSchema(doc, inner) }
  }
  return undefined
}

/** Where a resource's item is in an answer's schema (itemIn): the schema itself, for an item whose key is the path's alone. */
export function placeIn (doc: OpenApiDocument, resource: Resource, schema: unknown): { envelope: Envelope, property?: string, schema: JsonSchema } | undefined {
  return resource.property === undefined ? { envelope: [], schema: derefSchema(doc, schema) } : itemIn(doc, schema, resource.parameter, resource.name)
}

/**
 * The key a create's answer is alone, where its schema is text or a number and the answer one
 * (LUIS's POST /apps/ answers 201 with the new app's GUID, a JSON string): how its client learns
 * the key. Else undefined. The mock's answer and the verifier's reading of it.
 */
export function keyAlone (doc: OpenApiDocument, schema: unknown, answer: unknown): string | number | undefined {
  const types = [derefSchema(doc, schema)?.type].flat()
  const alone = types.length > 0 && types.every((type) => type === 'string' || type === 'integer' || type === 'number')
  return alone && (typeof answer === 'string' || typeof answer === 'number') ? answer : undefined
}

/**
 * The key a create's answer gives in its body: its item's (an item a POST creates holds its key),
 * or the answer itself where it is the key alone; else undefined. The verifier's reading of it
 * (createdKey), and the mock's test of whether its answer needs a Location to name the item.
 */
export function answeredKey (doc: OpenApiDocument, resource: Resource, route: RouteSpec, answered: unknown): unknown {
  const media = successJson(route)?.media
  const place = media?.schema === undefined ? undefined : placeIn(doc, resource, media.schema)
  const item = place === undefined ? undefined : valueIn(answered, place.envelope)
  return item?.[resource.property!] ?? keyAlone(doc, media?.schema, answered)
}

/** Whether a route of the resource names the item by its path (/pets/{petId}); else by its body's key (PUT /pet), or it makes or lists them. */
export const keyInPath = (resource: Resource, route: RouteSpec): boolean => Object.values(route.pathNames).includes(resource.parameter)

/** The schema of a route's JSON request body, where it takes one. */
export const jsonBodySchema = (route: RouteSpec): unknown => route.body?.media.find((m) => kindOf(m.type) === 'json')?.schema

// What a body may hold beside the item's envelope: JSON:API's document members.
const BESIDE_ENVELOPE = new Set(['meta', 'links', 'jsonapi', 'included'])

/**
 * Where a write's body holds the item, as the read's answer does (JSON:API's `{"data": …}`, in the
 * request as in the answer): the read's envelope, where the write's JSON body has that property,
 * nothing else but a document's members (meta, links…), and the item no property of that name;
 * else none, the body is the item (Box's `{"assigned_to": {"id": …}, "storage_policy": …}` is an
 * item, though its read's item is found in `assigned_to`). The mock's and the verifier's.
 */
export function bodyEnvelope (doc: OpenApiDocument, resource: Resource, route: RouteSpec): Envelope {
  const media = successJson(resource.operations.read)?.media
  const place = media?.schema === undefined ? undefined : placeIn(doc, resource, media.schema)
  const wrapper = place?.envelope[0]
  const body = Object.keys(propertiesOf(doc, jsonBodySchema(route)))
  return wrapper !== undefined && body.includes(wrapper) && body.every((name) => name === wrapper || BESIDE_ENVELOPE.has(name)) && !(wrapper in propertiesOf(doc, place!.schema)) ? [wrapper] : []
}

/** Where a list answer's items are: the body itself when an array, or its one array property ({ "items": [...] }). */
export function listIn (doc: OpenApiDocument, schema: unknown): { envelope: Envelope, array: JsonSchema, items: JsonSchema } | undefined {
  const own = arrayIn(doc, schema)
  if (own !== undefined) return { envelope: [], array: own, items: derefSchema(doc, own.items ?? {}) }
  const arrays = Object.entries(propertiesOf(doc, schema)).map(([name, inner]) => [name, arrayIn(doc, inner)] as const).filter(([, array]) => array !== undefined)
  if (arrays.length !== 1) return undefined
  const [[name, array]] = arrays
  return { envelope: [name], array: array!, items: derefSchema(doc, array!.items ?? {}) }
}

/** The array a schema is: itself, or the part of its allOf that is one (AWS's: an allOf of an array and its description). */
function arrayIn (doc: OpenApiDocument, schema: unknown, seen = new Set<unknown>()): JsonSchema | undefined {
  const s = derefSchema(doc, schema)
  if (s === null || typeof s !== 'object' || seen.has(s)) return undefined
  seen.add(s)
  const types = [s.type ?? []].flat()
  if (types.includes('array') || (types.length === 0 && s.items !== undefined)) return s
  if (types.length > 0) return undefined
  for (const part of Array.isArray(s.allOf) ? s.allOf : []) {
    const found = arrayIn(doc, part, seen)
    if (found !== undefined) return found
  }
  return undefined
}

/** The resources of a document's routes, and the operations bound to each. */
export function inferResources (doc: OpenApiDocument, routes: RouteSpec[]): Inference {
  const byPath = new Map<string, RouteSpec[]>()
  for (const route of routes) byPath.set(route.path, [...byPath.get(route.path) ?? [], route])
  const resources: Resource[] = []
  const bindings: Inference['bindings'] = new Map()
  const skipped: string[] = []
  // An item path's collection, where its last segment is a key ({id}) and the one before a name
  // (/things/{a}/{b} is no collection).
  const collectionOf = (item: string): string | undefined => {
    const segments = bare(item).split('/')
    return segments.length >= 3 && SEGMENT_PARAMETER.test(segments.at(-1)!) && !SEGMENT_PARAMETER.test(segments.at(-2)!) ? segments.slice(0, -1).join('/') : undefined
  }
  // A collection's create and list are one item path's, where several name its items
  // (Superset's GET /dashboard/{id_or_slug} and PUT /dashboard/{pk}): the first that reads them.
  const itemOf = new Map<string, string>()
  const reads = (path: string | undefined): boolean => byPath.get(path ?? '')?.some((r) => r.method === 'GET') === true
  for (const item of byPath.keys()) {
    const collection = collectionOf(item)
    if (collection !== undefined && (!itemOf.has(collection) || (!reads(itemOf.get(collection)) && reads(item)))) itemOf.set(collection, item)
  }
  for (const [item, itemRoutes] of byPath) {
    const collection = collectionOf(item)
    if (collection === undefined) continue
    const segments = bare(item).split('/')
    const parameter = SEGMENT_PARAMETER.exec(segments.at(-1)!)![1]
    const name = segments.at(-2)!
    const at = (method: string, path: string) => (byPath.get(path) ?? byPath.get(`${path}/`) ?? []).find((r) => r.method === method)
    const operations: Partial<Record<Action, RouteSpec>> = {}
    for (const route of itemRoutes) if (ITEM_ACTIONS[route.method] !== undefined) operations[ITEM_ACTIONS[route.method]] = route
    // An update POSTed to the item path, as Stripe's are, where there is no PATCH: it takes a body
    // and answers the item.
    const update = at('POST', item)
    const updated = successJson(update)?.media.schema
    if (operations.patch === undefined && update?.body !== undefined && updated !== undefined && itemIn(doc, updated, parameter, name) !== undefined) operations.patch = update
    // A create that declares no success (the petstore's POST /pet answers only 405) creates nothing;
    // one whose body is a list (Mastodon's statuses, as its description has them) makes no one item.
    const create = itemOf.get(collection) === item ? at('POST', collection) : undefined
    const takesList = create?.body !== undefined && create.body.media.length > 0 && create.body.media.every((media) => shapeOf(doc, media.schema) === 'array')
    if (create !== undefined && successOf(create) !== undefined && !takesList) operations.create = create
    const list = itemOf.get(collection) === item ? at('GET', collection) : undefined
    if (list !== undefined) operations.list = list
    if (operations.create === undefined && operations.replace === undefined) {
      // A path only read is no resource; one that changes or deletes what nothing creates is worth a word.
      if (operations.patch !== undefined || operations.delete !== undefined) skipped.push(`${item}: nothing creates its items (${itemOf.get(collection) === item ? `no POST ${collection} that declares a success and takes one item` : `POST ${collection} makes ${itemOf.get(collection)}'s`}, no PUT ${item})`)
      continue
    }
    // The item's schema, from the answers that carry one: a read's, else a create's or a replace's.
    const schemas = (['read', 'create', 'replace', 'patch'] as const)
      .map((action) => successJson(operations[action])?.media.schema)
      .filter((schema) => schema !== undefined)
    // Made by PUT alone, an item may hold no key: the path's is its key, and the read's answer (an object of properties) the item.
    const keyless = operations.create === undefined && operations.read !== undefined ? derefSchema(doc, successJson(operations.read)?.media.schema) : undefined
    const found = schemas.map((schema) => itemIn(doc, schema, parameter, name)).find((it) => it !== undefined) ??
      (Object.keys(propertiesOf(doc, keyless)).length > 0 ? { envelope: [], property: undefined, schema: keyless } : undefined)
    if (found === undefined) {
      skipped.push(`${item}: no answer of it holds an item with a key ({${parameter}}, id, ${singular(name)}Id or ${singular(name)}_id)`)
      continue
    }
    // A replace through the collection, the key in its body, where the item path has none (the
    // Petstore's PUT /pet, "update an existing pet by Id"): a change of what the create made.
    const put = operations.replace === undefined && operations.create !== undefined && found.property !== undefined ? at('PUT', collection) : undefined
    const named = put === undefined ? undefined : derefSchema(doc, propertiesOf(doc, jsonBodySchema(put))[found.property!])
    if (put !== undefined && successOf(put) !== undefined && named !== undefined && named.readOnly !== true) operations.replace = put
    const parents = segments.slice(0, -1).map((segment) => SEGMENT_PARAMETER.exec(segment)?.[1]).filter((p): p is string => p !== undefined)
    const resource: Resource = { name, item, parameter, property: found.property, parents, schema: found.schema, operations }
    resources.push(resource)
    for (const [action, route] of Object.entries(operations) as Array<[Action, RouteSpec]>) bindings.set(route.operationId, { resource, action })
  }
  return { resources, bindings, skipped }
}

/** What was inferred, a line each, as the mock prints it at start. */
export function describeInference ({ resources, skipped }: Inference): string[] {
  return [
    ...resources.map((r) => `${r.item}: ${r.name} keyed by ${r.property ?? `the path's {${r.parameter}}`}${r.parents.length > 0 ? `, each {${r.parents.join('}, {')}} its own` : ''} (${Object.entries(r.operations).map(([action, route]) => `${action} ${route.method}${keyInPath(r, route) || action === 'create' || action === 'list' ? '' : ` ${route.path}`}`).join(', ')})`),
    ...skipped.map((why) => `not remembered: ${why}`)
  ]
}
