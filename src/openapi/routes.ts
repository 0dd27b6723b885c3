import { deprecationOf, type Deprecation } from './deprecation.js'
import type { OpenApiDocument } from './document.js'

// Step one of two: turn the OpenAPI document into a plain list of routes. Nothing here
// knows Fastify; register.ts binds this list to handlers and guards.

export type JsonSchema = Record<string, any>
export type SecurityRequirement = Record<string, string[]>

export interface RouteSpec {
  operationId: string
  method: string
  /** The path as the document spells it: /plants/{id}. */
  path: string
  /** The path in Fastify's form: /plants/{id} becomes /plants/:id. */
  url: string
  /** The requirements in force: the operation's own, or else the document's. */
  security: SecurityRequirement[]
  /** The headers of a deprecated operation; undefined for one that is not. */
  deprecation?: Deprecation
  schema: {
    body?: JsonSchema
    params?: JsonSchema
    querystring?: JsonSchema
    headers?: JsonSchema
    response: Record<string, JsonSchema>
  }
}

// OpenAPI 3.1's default dialect is its base dialect: JSON Schema 2020-12 plus OpenAPI's
// annotations. That, or plain 2020-12, is what validation.ts validates with.
const DIALECTS = new Set([undefined, 'https://spec.openapis.org/oas/3.1/dialect/base', 'https://json-schema.org/draft/2020-12/schema'])
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
const JSON_MEDIA_TYPE = 'application/json'
const SCHEMA_PREFIX = '#/components/schemas/'
const PARAMETER_PARTS = { path: 'params', query: 'querystring', header: 'headers' } as const

export function routesFromDocument (doc: OpenApiDocument): RouteSpec[] {
  if (!/^3\.1\.\d+$/.test(String(doc.openapi))) throw new Error(`only OpenAPI 3.1 documents are supported, got ${doc.openapi}`)
  if (!DIALECTS.has(doc.jsonSchemaDialect)) throw new Error(`jsonSchemaDialect ${doc.jsonSchemaDialect} is not supported; use JSON Schema 2020-12`)
  const routes: RouteSpec[] = []
  for (const [path, rawItem] of Object.entries<any>(doc.paths ?? {})) {
    const pathItem = resolve(doc, rawItem)
    for (const method of METHODS) {
      const operation = pathItem[method]
      if (operation === undefined) continue
      const where = `${method.toUpperCase()} ${path}`
      if (typeof operation.operationId !== 'string') throw new Error(`${where} has no operationId`)
      routes.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        url: path.replace(/{([^}]+)}/g, ':$1'),
        security: operation.security ?? doc.security ?? [],
        deprecation: deprecationOf(operation, where),
        schema: {
          ...parameterSchemas(doc, [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])], where),
          ...bodySchema(doc, operation.requestBody, where),
          response: responseSchemas(doc, operation.responses ?? {})
        }
      })
    }
  }
  return routes
}

/** Follows local $refs between OpenAPI objects (parameters, request bodies, responses, path items). */
function resolve (doc: OpenApiDocument, value: any, seen = new Set<string>()): any {
  if (value === null || typeof value !== 'object' || typeof value.$ref !== 'string') return value
  const ref: string = value.$ref
  if (seen.has(ref)) throw new Error(`circular $ref ${ref}`)
  seen.add(ref)
  return resolve(doc, pointer(doc, ref), seen)
}

function pointer (doc: OpenApiDocument, ref: string): any {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`)
  let target: any = doc
  for (const token of ref.slice(2).split('/')) {
    target = target?.[decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  if (target === undefined) throw new Error(`$ref ${ref} points at nothing`)
  return target
}

/**
 * Makes a schema self-contained: references to #/components/schemas/X become #/$defs/X,
 * and every component it reaches, directly or through others, is carried along under $defs.
 */
export function standaloneSchema (doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  const defs: Record<string, JsonSchema> = {}
  const rewrite = (node: any): any => {
    if (Array.isArray(node)) return node.map(rewrite)
    if (node === null || typeof node !== 'object') return node
    const out: Record<string, any> = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        if (!value.startsWith(SCHEMA_PREFIX)) throw new Error(`schema $ref must point into ${SCHEMA_PREFIX}, got ${value}`)
        const name = decodeURIComponent(value.slice(SCHEMA_PREFIX.length).split('/')[0])
        if (!(name in defs)) {
          defs[name] = {} // reserve first, so recursive schemas terminate
          defs[name] = rewrite(pointer(doc, SCHEMA_PREFIX + name))
        }
        out.$ref = '#/$defs/' + value.slice(SCHEMA_PREFIX.length)
      } else {
        out[key] = rewrite(value)
      }
    }
    return out
  }
  const root = rewrite(schema)
  return Object.keys(defs).length === 0 ? root : { ...root, $defs: { ...root.$defs, ...defs } }
}

function parameterSchemas (doc: OpenApiDocument, rawParameters: any[], where: string): Partial<RouteSpec['schema']> {
  // Operation-level parameters override path-level ones with the same name and location.
  const byKey = new Map<string, any>()
  for (const raw of rawParameters) {
    const parameter = resolve(doc, raw)
    byKey.set(`${parameter.in}:${parameter.name}`, parameter)
  }
  const parts: Partial<RouteSpec['schema']> = {}
  for (const parameter of byKey.values()) {
    if (parameter.in === 'cookie') throw new Error(`${where}: cookie parameters are not supported`)
    const part = PARAMETER_PARTS[parameter.in as keyof typeof PARAMETER_PARTS]
    if (part === undefined) throw new Error(`${where}: parameter ${parameter.name} has unknown location "${parameter.in}"`)
    if (parameter.schema === undefined) throw new Error(`${where}: parameter ${parameter.name} has no schema`)
    // Node lowercases incoming header names.
    const name = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name
    const target = parts[part] ??= { type: 'object', properties: {}, required: [] }
    target.properties[name] = parameter.schema
    if (parameter.required === true || parameter.in === 'path') target.required.push(name)
  }
  // Each part made self-contained as a whole, so that its $defs sit at its root, where a
  // property's $ref (#/$defs/PlantId) resolves.
  for (const part of Object.keys(parts) as Array<keyof typeof parts>) parts[part] = standaloneSchema(doc, parts[part]!)
  return parts
}

function bodySchema (doc: OpenApiDocument, rawBody: any, where: string): Partial<RouteSpec['schema']> {
  if (rawBody === undefined) return {}
  const body = resolve(doc, rawBody)
  const mediaTypes = Object.keys(body.content ?? {})
  if (mediaTypes.length !== 1 || mediaTypes[0] !== JSON_MEDIA_TYPE) {
    throw new Error(`${where}: only an ${JSON_MEDIA_TYPE} request body is supported, got ${mediaTypes.join(', ') || 'none'}`)
  }
  if (body.required !== true) throw new Error(`${where}: optional request bodies are not supported; mark it required`)
  return { body: standaloneSchema(doc, body.content[JSON_MEDIA_TYPE].schema ?? {}) }
}

function responseSchemas (doc: OpenApiDocument, responses: Record<string, any>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {}
  for (const [status, raw] of Object.entries(responses)) {
    const schema = resolve(doc, raw).content?.[JSON_MEDIA_TYPE]?.schema
    // Fastify spells status ranges 2xx where OpenAPI spells them 2XX.
    if (schema !== undefined) out[status.toLowerCase()] = standaloneSchema(doc, schema)
  }
  return out
}
