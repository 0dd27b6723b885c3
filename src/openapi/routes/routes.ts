import { deprecationOf, type Deprecation } from './deprecation.ts'
import { DocumentError, pointerOf, pointerToken } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { operationIdNamer } from './operation-ids.ts'
import { derefSchema, pointerTarget, type JsonSchema } from '../schemas/schema.ts'
import { fastifyUrl, type PathTemplate } from './path-template.ts'

// Step one of two: turn the OpenAPI document into a plain list of routes, each operation with
// its parameters, bodies, answers and security resolved. Nothing here knows Fastify; register.ts
// binds this list to handlers and guards. An operation that cannot be served is refused, with
// where and why: the service stops on the first (routesFromDocument), the mock leaves each out.

export type { JsonSchema } from '../schemas/schema.ts'
export { standaloneSchema } from '../schemas/schema.ts'
export type SecurityRequirement = Record<string, string[]>
export type Location = 'path' | 'query' | 'header' | 'cookie'
/** How a parameter's value is spelled in text: one value, a list, or named members. */
export type Shape = 'primitive' | 'array' | 'object'

export interface ParameterSpec {
  name: string
  in: Location
  required: boolean
  style: string
  explode: boolean
  /** Its schema, or, for a parameter given by content, that media type's. */
  schema: JsonSchema
  /** The media type of a parameter given by content: its value is that, as text (JSON in a query). */
  contentType?: string
  shape: Shape
  /** Where its examples are: the Parameter Object as written, or for one given by content, its media type's. */
  object: Record<string, any>
}

export interface MediaSpec {
  /** The media type or range as the document writes it, in lower case, without parameters. */
  type: string
  /** The same with the parameters the document gives it ("application/json; charset=utf-8"): what an answer's Content-Type says, and what a client's Accept is matched against. */
  spelled: string
  schema?: JsonSchema
  /** The Media Type Object as written: its examples and encoding. */
  object: Record<string, any>
}

export interface BodySpec {
  required: boolean
  media: MediaSpec[]
}

export interface ResponseSpec {
  /** As the document writes it: 200, 2XX or default. */
  status: string
  description: string
  media: MediaSpec[]
  /** Each header's Header Object, by name as written. */
  headers: Record<string, Record<string, any>>
  /** Each Link Object, by its name: what a next request may take from this answer. */
  links: Record<string, Record<string, any>>
}

export interface RouteSpec {
  operationId: string
  method: string
  /** The path as the document spells it: /plants/{id}. */
  path: string
  /** The path in Fastify's form, each parameter named p0, p1…: /plants/{id} becomes /plants/:p0. */
  url: string
  /** The path's parameters, by their name in `url`. */
  pathNames: Record<string, string>
  /** Where the operation is in the document: #/paths/~1plants/post. */
  pointer: string
  /** The requirements in force, any one of which will do: the operation's own, or else the document's. */
  security: SecurityRequirement[]
  /** The headers of a deprecated operation; undefined for one that is not. */
  deprecation?: Deprecation
  parameters: ParameterSpec[]
  body?: BodySpec
  responses: ResponseSpec[]
}

/** An operation that cannot be served: where it is, and why, in a sentence that names it. */
export interface Refusal { operation: string, pointer: string, problem: string }

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const LOCATIONS = new Set(['path', 'query', 'header', 'cookie'])
// Headers HTTP itself says what they are: a parameter of one of these names is ignored (OpenAPI's Parameter Object).
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization'])
const DEFAULT_STYLE: Record<Location, string> = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' }
const STYLES: Record<Location, string[]> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form']
}
// A media type or a range of them: */*, image/*, application/*+json (RFC 6839's suffixes), application/json.
const MEDIA_RANGE = /^(\*\/\*|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+*-]+)$/

/** What makes an operation refused, and where. */
class Refused extends Error {
  readonly pointer: string
  readonly problem: string
  constructor (pointer: string, problem: string) {
    super(problem)
    this.pointer = pointer
    this.problem = problem
  }
}

/** Follows $refs between OpenAPI objects (parameters, bodies, responses, headers, path items), refusing a cycle or a ref to nothing. */
function resolve (doc: OpenApiDocument, value: any, at: string): any {
  const seen = new Set<string>()
  while (value !== null && typeof value === 'object' && typeof value.$ref === 'string') {
    const ref: string = value.$ref
    if (seen.has(ref)) throw new Refused(at, `has a circular $ref (${[...seen, ref].join(' → ')})`)
    seen.add(ref)
    const target = pointerTarget(doc, ref)
    if (target === undefined) throw new Refused(at, `has a $ref to ${ref}, and there is nothing there`)
    value = target
  }
  return value
}

/** Whether a schema's values are lists, objects or single values, as a parameter's style spells them. */
export function shapeOf (doc: OpenApiDocument, schema: any, seen = new Set<unknown>()): Shape {
  const resolved = derefSchema(doc, schema)
  if (resolved === null || typeof resolved !== 'object' || seen.has(resolved)) return 'primitive'
  seen.add(resolved)
  const types = [resolved.type ?? []].flat().filter((type) => type !== 'null')
  if (types.length === 1 && (types[0] === 'array' || types[0] === 'object')) return types[0]
  if (types.length === 0) {
    if (resolved.items !== undefined || resolved.prefixItems !== undefined) return 'array'
    if (resolved.properties !== undefined || resolved.additionalProperties !== undefined) return 'object'
    for (const branch of [...resolved.allOf ?? [], ...resolved.oneOf ?? [], ...resolved.anyOf ?? []]) {
      const shape = shapeOf(doc, branch, seen)
      if (shape !== 'primitive') return shape
    }
  }
  return 'primitive'
}

function mediaOf (doc: OpenApiDocument, content: unknown, at: string): MediaSpec[] {
  if (content === undefined) return []
  if (content === null || typeof content !== 'object') throw new Refused(at, 'has a content that is not a map of media types')
  // A key that lists several types ("text/csv, text/plain") gives each the same Media Type Object;
  // a piece that is a parameter ("application/json, charset=utf-8") belongs to the type before it.
  return Object.entries<any>(content).flatMap(([key, object]) => key.split(',').filter((each, i) => i === 0 || each.includes('/') || !each.includes('=')).map((each) => {
    const [bare, ...parameters] = each.split(';')
    const type = bare.trim().toLowerCase()
    if (!MEDIA_RANGE.test(type)) throw new Refused(at, `has a media type that is none: "${key}"`)
    const media = resolve(doc, object, at) ?? {}
    const spelled = [type, ...parameters.map((parameter) => parameter.trim()).filter((parameter) => parameter !== '')].join('; ')
    return { type, spelled, schema: media.schema, object: media }
  }))
}

function parametersOf (doc: OpenApiDocument, raw: unknown[], at: string): ParameterSpec[] {
  // An operation's parameter overrides the path's of the same name and location.
  const byKey = new Map<string, ParameterSpec>()
  for (const [i, entry] of raw.entries()) {
    const where = `${at}/parameters/${i}`
    const parameter = resolve(doc, entry, where)
    if (parameter === null || typeof parameter !== 'object' || typeof parameter.name !== 'string') throw new Refused(where, 'is a parameter with no name')
    const location = parameter.in as Location
    if (!LOCATIONS.has(location)) throw new Refused(where, `is parameter ${parameter.name} in "${parameter.in}", which is no location (path, query, header, cookie)`)
    const style: string = parameter.style ?? DEFAULT_STYLE[location]
    if (!STYLES[location].includes(style)) throw new Refused(where, `is parameter ${parameter.name} with style ${style}, which a ${location} parameter cannot have (${STYLES[location].join(', ')})`)
    // "If in is header and the name field is Accept, Content-Type or Authorization, the parameter definition SHALL be ignored."
    if (location === 'header' && IGNORED_HEADERS.has(parameter.name.toLowerCase())) continue
    const [content] = parameter.content === undefined ? [] : mediaOf(doc, parameter.content, where)
    const schema = content?.schema ?? parameter.schema ?? {}
    // Header names are case-insensitive; Node gives them in lower case.
    const name = location === 'header' ? parameter.name.toLowerCase() : parameter.name
    byKey.set(`${location}:${name}`, {
      name,
      in: location,
      required: parameter.required === true || location === 'path',
      style,
      explode: parameter.explode ?? style === 'form',
      schema,
      contentType: content?.type,
      shape: shapeOf(doc, schema),
      object: content?.object ?? parameter
    })
  }
  return [...byKey.values()]
}

function bodyOf (doc: OpenApiDocument, raw: unknown, at: string): BodySpec | undefined {
  if (raw === undefined) return undefined
  const body = resolve(doc, raw, `${at}/requestBody`)
  const media = mediaOf(doc, body?.content ?? {}, `${at}/requestBody`)
  if (media.length === 0) return undefined
  return { required: body.required === true, media }
}

function responsesOf (doc: OpenApiDocument, raw: unknown, at: string): ResponseSpec[] {
  if (raw === null || typeof raw !== 'object') return []
  return Object.entries<any>(raw).filter(([status]) => /^([1-5](\d\d|XX)|default)$/i.test(status)).map(([status, entry]) => {
    const where = `${at}/responses/${pointerToken(status)}`
    const response = resolve(doc, entry, where) ?? {}
    const headers: Record<string, Record<string, any>> = {}
    for (const [name, header] of Object.entries<any>(response.headers ?? {})) headers[name] = resolve(doc, header, `${where}/headers`) ?? {}
    // Links serve only the verifier: one it cannot follow is its note, not a reason to refuse the operation.
    const links: Record<string, Record<string, any>> = {}
    for (const [name, link] of Object.entries<any>(response.links ?? {})) links[name] = derefSchema(doc, link) ?? {}
    return { status: status.toUpperCase() === 'DEFAULT' ? 'default' : status.toUpperCase(), description: response.description ?? '', media: mediaOf(doc, response.content, where), headers, links }
  })
}

/** Each operation of the document as a route; and those it cannot serve, with why. */
export function routeList (doc: OpenApiDocument): { routes: RouteSpec[], refused: Refusal[] } {
  const routes: RouteSpec[] = []
  const refused: Refusal[] = []
  const ids = new Set<string>()
  const urls = new Set<string>()
  const nameOf = operationIdNamer(doc.paths ?? {}, METHODS)
  for (const [path, rawItem] of Object.entries<any>(doc.paths ?? {})) {
    const itemAt = pointerOf('paths', path)
    let pathItem: any
    let template: PathTemplate | undefined
    try {
      pathItem = resolve(doc, rawItem, itemAt) ?? {}
      template = fastifyUrl(path)
    } catch (err) {
      const problem = err instanceof Refused ? err.problem : (err as Error).message
      for (const method of METHODS) if (rawItem?.[method] !== undefined) refused.push({ operation: `${method.toUpperCase()} ${path}`, pointer: pointerOf('paths', path, method), problem: `${method.toUpperCase()} ${path} ${problem}` })
      continue
    }
    // HEAD is answered with GET's route unless the document declares it.
    for (const method of METHODS) {
      const operation = pathItem[method]
      if (operation === undefined) continue
      const at = pointerOf('paths', path, method)
      const name = `${method.toUpperCase()} ${path}`
      try {
        if (operation === null || typeof operation !== 'object') throw new Refused(at, 'is no operation')
        const operationId = nameOf(operation, method, path)
        if (ids.has(operationId)) throw new Refused(at, `has the operationId ${operationId}, which another operation has`)
        const parameters = parametersOf(doc, [...pathItem.parameters ?? [], ...operation.parameters ?? []], at)
        // Two path parameters with nothing between them are told apart by their schemas: the values they list, an integer's digits.
        const { url } = fastifyUrl(path, (name) => derefSchema(doc, parameters.find((p) => p.in === 'path' && p.name === name)?.schema))
        const key = `${method.toUpperCase()} ${url}`
        if (urls.has(key)) throw new Refused(at, `matches the same requests as another operation (${key})`)
        const inPath = new Set(parameters.filter((p) => p.in === 'path').map((p) => p.name))
        const missing = template.names.filter((n) => !inPath.has(n))
        if (missing.length > 0) throw new Refused(at, `has {${missing.join('}, {')}} in its path, with no path parameter to say what it is`)
        const extra = [...inPath].filter((n) => !template.names.includes(n))
        if (extra.length > 0) throw new Refused(at, `declares the path parameter(s) ${extra.join(', ')}, which its path does not have`)
        const route: RouteSpec = {
          operationId,
          method: method.toUpperCase(),
          path,
          url,
          pathNames: template.byName,
          pointer: at,
          security: operation.security ?? doc.security ?? [],
          deprecation: deprecationOf(operation, name),
          parameters,
          body: bodyOf(doc, operation.requestBody, at),
          responses: responsesOf(doc, operation.responses, at)
        }
        ids.add(operationId)
        urls.add(key)
        routes.push(route)
      } catch (err) {
        // What the document says that cannot be served (a bad date of deprecation too).
        refused.push(err instanceof Refused ? { operation: name, pointer: err.pointer, problem: `${name} ${err.problem}` } : { operation: name, pointer: at, problem: (err as Error).message })
      }
    }
  }
  return { routes, refused }
}

/** The routes of a document the service serves whole: the first operation it cannot serve stops it. */
export function routesFromDocument (doc: OpenApiDocument, file = 'openapi.yaml'): RouteSpec[] {
  const { routes, refused } = routeList(doc)
  if (refused.length > 0) throw new DocumentError(file, refused[0].pointer, refused[0].problem)
  return routes
}
