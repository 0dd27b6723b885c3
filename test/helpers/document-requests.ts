import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { OpenApiDocument } from '../../src/openapi/document/document.ts'
import type { MediaSpec, ParameterSpec, ResponseSpec, RouteSpec } from '../../src/openapi/routes/routes.ts'
import { documentPattern } from '../../src/openapi/schemas/patterns.ts'
import { validSample } from '../../src/openapi/schemas/samples.ts'
import { derefSchema, standaloneSchema } from '../../src/openapi/schemas/schema.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'

// Requests made from an OpenAPI document, as a client that read it would send them, and a judge
// of the answers: the tests of the mock on ReadMe's example documents, and the corpus run that sets
// the mock beside Prism's (scripts/corpus/), use both. For each operation: one valid request (its
// parameters, body and credentials sampled from their schemas and spelled as their styles say), and
// invalid ones (a body without a required property, a property of the wrong type, a required query
// parameter missing, a path parameter of the wrong type, no credentials). The judge checks an
// answer against the document with an Ajv of its own: a declared status, a declared media type, a
// body valid against its schema.

export interface HttpRequest { method: string, url: string, headers: Record<string, string>, body?: string | Buffer }
export type Fault = 'body without a required property' | 'body property of the wrong type' | 'required query parameter missing' | 'path parameter of the wrong type' | 'no credentials'
export interface InvalidRequest { fault: Fault, request: HttpRequest }

// Patterns run as the engine runs them (patterns.ts): a document's runaway pattern must not hold the judge either.
const ajv = new Ajv2020({ strict: false, logger: false, validateSchema: false, allErrors: false, code: { regExp: documentPattern } })
;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
ajv.addKeyword({ keyword: 'int64', schemaType: 'boolean', validate: () => true })
ajv.addKeyword({ keyword: 'x-discriminator', schemaType: 'object', validate: () => true })

const compiled = new WeakMap<object, ValidateFunction>()
/** A validator of the document's schema, in the view a request or an answer is judged by. */
function validator (doc: OpenApiDocument, schema: object, view: 'request' | 'response'): ValidateFunction {
  let validate = compiled.get(schema)
  if (validate === undefined) {
    try {
      validate = ajv.compile(standaloneSchema(doc, schema, view))
    } catch {
      validate = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction
    }
    compiled.set(schema, validate)
  }
  return validate
}

// Samples are made valid by the engine's own validator (its discriminators included); answers are judged by the Ajv above.
const engines = new WeakMap<OpenApiDocument, ReturnType<typeof createValidators>>()
const engineValidators = new WeakMap<object, ValidateFunction>()

/** A value of the schema a client may send, valid against it (samples.ts); throws Unbuildable when none could be made. */
function sampleOf (doc: OpenApiDocument, schema: object | undefined): unknown {
  if (schema === undefined) return undefined
  let validate = engineValidators.get(schema)
  if (validate === undefined) {
    let engine = engines.get(doc)
    if (engine === undefined) engines.set(doc, engine = createValidators(doc))
    engineValidators.set(schema, validate = engine.request(schema))
  }
  const made = validSample(doc, schema, validate, { direction: 'request' })
  if (made?.valid !== true) throw new Unbuildable(`no valid value of ${JSON.stringify(schema).slice(0, 120)} could be made`)
  return made.value
}

/** An operation no valid request can be made for by these means (a pattern the sampler cannot follow, say). */
export class Unbuildable extends Error {}

const text = (value: unknown): string => typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)
const enc = encodeURIComponent

/** A parameter's value spelled as its style says, for a path segment, a header or a cookie. */
function spelled (p: ParameterSpec, value: unknown, encode: (s: string) => string): string {
  if (p.contentType !== undefined) return encode(JSON.stringify(value))
  const items = Array.isArray(value)
    ? value.map((v) => encode(text(v)))
    : value !== null && typeof value === 'object'
      ? Object.entries(value).map(([k, v]) => p.explode ? `${encode(k)}=${encode(text(v))}` : `${encode(k)},${encode(text(v))}`)
      : undefined
  const join = (separator: string) => items === undefined ? encode(text(value)) : items.join(separator)
  switch (p.style) {
    case 'label': return '.' + join(p.explode ? '.' : ',')
    case 'matrix':
      if (Array.isArray(value) && p.explode) return value.map((v) => `;${p.name}=${encode(text(v))}`).join('')
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && p.explode) return ';' + join(';')
      return `;${p.name}=` + join(',')
    default: return join(',')
  }
}

/** A query parameter as name=value pairs, its style's. */
function queryPairs (p: ParameterSpec, value: unknown): string[] {
  const name = enc(p.name)
  if (p.contentType !== undefined) return [`${name}=${enc(JSON.stringify(value))}`]
  if (p.style === 'deepObject' && value !== null && typeof value === 'object') return Object.entries(value).map(([k, v]) => `${name}%5B${enc(k)}%5D=${enc(text(v))}`)
  if (Array.isArray(value)) {
    if (p.style === 'form' && p.explode) return value.map((v) => `${name}=${enc(text(v))}`)
    const separator = p.style === 'spaceDelimited' ? '%20' : p.style === 'pipeDelimited' ? '%7C' : ','
    return [`${name}=${value.map((v) => enc(text(v))).join(separator)}`]
  }
  if (value !== null && typeof value === 'object') {
    if (p.style === 'form' && p.explode) return Object.entries(value).map(([k, v]) => `${enc(k)}=${enc(text(v))}`)
    return [`${name}=${Object.entries(value).map(([k, v]) => `${enc(k)},${enc(text(v))}`).join(',')}`]
  }
  return [`${name}=${enc(text(value))}`]
}

/** Credentials of the form each scheme of the first requirement asks for. */
function credentials (doc: OpenApiDocument, route: RouteSpec): { headers: Record<string, string>, query: string[], cookies: string[] } {
  const out = { headers: {} as Record<string, string>, query: [] as string[], cookies: [] as string[] }
  const requirement = route.security.find((r) => Object.keys(r).length === 0) !== undefined ? {} : route.security[0] ?? {}
  for (const name of Object.keys(requirement)) {
    const scheme = doc.components?.securitySchemes?.[name] ?? {}
    if (scheme.type === 'apiKey') {
      if (scheme.in === 'query') out.query.push(`${enc(scheme.name)}=test-key`)
      else if (scheme.in === 'cookie') out.cookies.push(`${scheme.name}=test-key`)
      // An API key in Authorization beside an http scheme of the same requirement: the scheme's credentials are a key too.
      else out.headers[String(scheme.name).toLowerCase()] ??= 'test-key'
    } else if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'basic') {
      out.headers.authorization = `Basic ${Buffer.from('user:password').toString('base64')}`
    } else if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() !== 'bearer') {
      out.headers.authorization = `${scheme.scheme} test-credentials`
    } else if (scheme.type !== 'mutualTLS') {
      out.headers.authorization = 'Bearer test-token'
    }
  }
  return out
}

const isJson = (type: string) => type === 'application/json' || type.endsWith('+json')

/** The body a client sends in `media`: its schema's sample, spelled as its media type wants it. */
function bodyIn (doc: OpenApiDocument, media: MediaSpec, value: unknown): { type: string, body: string | Buffer } {
  const type = media.type.includes('*') ? (media.type === 'image/*' ? 'image/png' : 'application/json') : media.type
  if (isJson(type)) return { type, body: JSON.stringify(value ?? {}) }
  if (type === 'application/x-www-form-urlencoded') {
    // Each property as a query parameter with its encoding's style (form, exploded, by default).
    const encoding: Record<string, any> = media.object.encoding ?? {}
    const pairs = Object.entries(value ?? {}).flatMap(([k, v]) => {
      const style: string = encoding[k]?.style ?? 'form'
      const json = /json/.test(encoding[k]?.contentType ?? '') ? 'application/json' : undefined
      return queryPairs({ name: k, in: 'query', required: false, style, explode: encoding[k]?.explode ?? style === 'form', schema: {}, contentType: json, shape: Array.isArray(v) ? 'array' : v !== null && typeof v === 'object' ? 'object' : 'primitive' }, v)
    })
    return { type, body: pairs.join('&') }
  }
  if (type.startsWith('multipart/')) {
    const boundary = 'test-boundary-7MA4YWxkTrZu0gW'
    const parts = Object.entries(value ?? {}).flatMap(([k, v]) => {
      const property = derefSchema(doc, derefSchema(doc, media.schema)?.properties?.[k]) ?? {}
      const file = property.format === 'binary' || property.contentMediaType !== undefined || property.type === undefined
      return (Array.isArray(v) && derefSchema(doc, property)?.type === 'array' ? v : [v]).map((item) => file
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${k}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${text(item)}\r\n`
        : `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n${typeof item === 'object' && item !== null ? 'Content-Type: application/json\r\n' : ''}\r\n${text(item)}\r\n`)
    })
    return { type: `multipart/form-data; boundary=${boundary}`, body: parts.join('') + `--${boundary}--\r\n` }
  }
  if (type.startsWith('text/') || type.endsWith('xml')) return { type, body: typeof value === 'string' ? value : text(value ?? 'text') }
  return { type, body: Buffer.from('test bytes') }
}

/** The body media type a client would pick: JSON where the operation takes it. */
const bodyMedia = (route: RouteSpec): MediaSpec | undefined => route.body?.media.find((m) => isJson(m.type)) ?? route.body?.media[0]

const FRAMING = new Set(['content-length', 'transfer-encoding', 'host', 'connection'])

/** The operation's valid request: every parameter (required and not), its body, and credentials; throws Unbuildable when one cannot be made. */
export function validRequest (doc: OpenApiDocument, route: RouteSpec, omit?: { parameter?: ParameterSpec, credentials?: boolean, body?: unknown }): HttpRequest {
  let path = route.path
  const query: string[] = []
  const headers: Record<string, string> = {}
  const cookies: string[] = []
  for (const p of route.parameters) {
    // What the HTTP client writes itself, the length of the body it sends.
    if (p === omit?.parameter || (p.in === 'header' && FRAMING.has(p.name))) continue
    // Optional parameters too: a client may send any of them, but one whose value no style can spell (a list of objects).
    const value = sampleOf(doc, p.schema)
    if (value === undefined) continue
    const nested = p.contentType === undefined && value !== null && typeof value === 'object' && Object.values(value).some((v) => v !== null && typeof v === 'object')
    if (nested && p.required) throw new Unbuildable(`${p.in} parameter ${p.name} is a structure no style spells`)
    if (nested) continue
    if (p.in === 'path') path = path.replace(`{${p.name}}`, spelled(p, value, enc))
    else if (p.in === 'query') query.push(...queryPairs(p, value))
    else if (p.in === 'header') headers[p.name] = spelled(p, value, (s) => s)
    else cookies.push(`${p.name}=${spelled(p, value, enc)}`)
  }
  if (omit?.credentials !== true) {
    const given = credentials(doc, route)
    Object.assign(headers, given.headers)
    query.push(...given.query)
    cookies.push(...given.cookies)
  }
  if (cookies.length > 0) headers.cookie = cookies.join('; ')
  const request: HttpRequest = { method: route.method, url: path + (query.length === 0 ? '' : `?${query.join('&')}`), headers }
  const media = bodyMedia(route)
  if (media !== undefined) {
    const { type, body } = bodyIn(doc, media, omit !== undefined && 'body' in omit ? omit.body : sampleOf(doc, media.schema))
    request.headers['content-type'] = type
    request.body = body
  }
  return request
}

/** The required properties of an object schema, through $refs and allOf, and each one's schema. */
function requiredOf (doc: OpenApiDocument, schema: unknown): Map<string, any> {
  const out = new Map<string, any>()
  const resolved = derefSchema(doc, schema)
  if (resolved === null || typeof resolved !== 'object') return out
  const properties = resolved.properties ?? {}
  for (const name of Array.isArray(resolved.required) ? resolved.required : []) {
    if (derefSchema(doc, properties[name])?.readOnly !== true) out.set(name, properties[name])
  }
  for (const part of resolved.allOf ?? []) for (const [name, s] of requiredOf(doc, part)) out.set(name, s)
  return out
}

/** A value of the wrong type for `schema`: text for a number, a boolean or a list; a number for text. */
function wrongFor (doc: OpenApiDocument, schema: unknown): unknown {
  const types = [derefSchema(doc, schema)?.type].flat().filter(Boolean)
  if (types.length === 0) return undefined
  return types.includes('string') ? (types.includes('number') || types.includes('integer') ? [[]] : 12345) : 'not-of-its-type'
}

/** The invalid requests the operation must refuse (400, or 401 without credentials), each with one fault. */
export function invalidRequests (doc: OpenApiDocument, route: RouteSpec): InvalidRequest[] {
  const out: InvalidRequest[] = []
  const media = bodyMedia(route)
  if (media !== undefined && isJson(media.type) && media.schema !== undefined) {
    const valid = sampleOf(doc, media.schema)
    const judge = validator(doc, media.schema, 'request')
    if (valid !== null && typeof valid === 'object' && !Array.isArray(valid)) {
      for (const name of requiredOf(doc, media.schema).keys()) {
        const missing = { ...valid as object }
        delete (missing as Record<string, unknown>)[name]
        if (!judge(missing)) {
          out.push({ fault: 'body without a required property', request: validRequest(doc, route, { body: missing }) })
          break
        }
      }
      for (const [name, schema] of requiredOf(doc, media.schema)) {
        const wrong = wrongFor(doc, schema)
        if (wrong === undefined) continue
        const broken = { ...valid as object, [name]: wrong }
        if (!judge(broken)) {
          out.push({ fault: 'body property of the wrong type', request: validRequest(doc, route, { body: broken }) })
          break
        }
      }
    }
  }
  const requiredQuery = route.parameters.find((p) => p.in === 'query' && p.required && !(p.shape === 'object' && p.explode))
  if (requiredQuery !== undefined) out.push({ fault: 'required query parameter missing', request: validRequest(doc, route, { parameter: requiredQuery }) })
  for (const p of route.parameters.filter((p) => p.in === 'path' && p.style === 'simple' && p.shape === 'primitive' && p.contentType === undefined)) {
    const types = [derefSchema(doc, p.schema)?.type].flat()
    if (types.length !== 1 || !['integer', 'number', 'boolean'].includes(types[0])) continue
    const request = validRequest(doc, route)
    const segments = route.path.split('/')
    const at = segments.indexOf(`{${p.name}}`)
    if (at < 0) continue
    const sent = request.url.split('?')
    const parts = sent[0].split('/')
    parts[at] = 'not-a-number'
    out.push({ fault: 'path parameter of the wrong type', request: { ...request, url: parts.join('/') + (sent[1] === undefined ? '' : `?${sent[1]}`) } })
    break
  }
  const secured = route.security.length > 0 && !route.security.some((r) => Object.keys(r).length === 0)
  const schemes = route.security.flatMap((r) => Object.keys(r)).map((name) => doc.components?.securitySchemes?.[name])
  if (secured && !schemes.some((scheme) => scheme?.type === 'mutualTLS')) out.push({ fault: 'no credentials', request: validRequest(doc, route, { credentials: true }) })
  return out
}

/** What is wrong with an answer to the valid request, by the document; undefined when nothing is. */
export function judgeAnswer (doc: OpenApiDocument, route: RouteSpec, status: number, contentType: string | undefined, body: string): string | undefined {
  const code = String(status)
  // An operation that declares no answer at all is answered by any success.
  if (route.responses.length === 0) return status >= 200 && status < 300 ? undefined : `status ${status}, where the operation declares no answer`
  const response: ResponseSpec | undefined = route.responses.find((r) => r.status === code) ?? route.responses.find((r) => r.status === `${code[0]}XX`) ?? route.responses.find((r) => r.status === 'default')
  if (response === undefined) return `status ${status}, which the operation does not declare`
  // No content, whatever the document says of it: HTTP sends none with a 204 or a 304.
  if (response.media.length === 0 || status === 204 || status === 304) return undefined
  const type = contentType?.split(';')[0].trim().toLowerCase()
  // A range: */*, image/*, or a suffix's, application/*+json.
  const inRange = (range: string): boolean => type !== undefined && (range === '*/*' || (range.endsWith('/*') && type.startsWith(range.slice(0, -1))) ||
    (range.includes('/*+') && type.startsWith(range.split('*')[0]) && (type.endsWith(range.split('*')[1]) || type === range.replace('*+', ''))))
  const media = response.media.find((m) => m.type === type) ?? response.media.find((m) => inRange(m.type))
  if (media === undefined) return `${status} in ${type ?? 'no media type'}, which the operation does not declare for it (${response.media.map((m) => m.type).join(', ')})`
  // A HEAD's answer has no body; a body not JSON is not checked here.
  if (media.schema === undefined || !isJson(type!) || route.method === 'HEAD') return undefined
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    return `${status} ${type}: the body is not JSON`
  }
  const validate = validator(doc, media.schema, 'response')
  return validate(value) ? undefined : `${status} ${type}: the body breaks its schema: ${(validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join(', ')}`
}
