import type { FastifyRequest } from 'fastify'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { PayloadTooLargeError } from '../../errors.ts'
import { parseJsonBody } from '../../http/json-body.ts'
import { carriesBody } from '../../http/message-body.ts'
import { bodyStreamOf, checkFieldCount, isMultipart, kindOf, matchMedia, mediaTypeOf, readMultipart, unsupported, type Limits } from './bodies.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { formReader, parameterReader, type Parts } from './parameters.ts'
import { shapeOf, type Location, type MediaSpec, type ParameterSpec, type RouteSpec } from '../routes/routes.ts'
import { derefSchema, type JsonSchema } from '../schemas/schema.ts'
import { validationError, type Validators } from '../schemas/validation.ts'

// A request checked against its operation, after its body is read and before its handler runs:
// each parameter read as its style says (parameters.ts) and checked by its schema, then the body,
// by the schema of the media type it came as. A failure answers 400, naming where: params,
// querystring, headers, cookies or body, and the property. What passes reaches the handler as
// typed values. Each schema is compiled when first needed.

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation's declared header and cookie parameters, typed; set by its validation. */
    openapi: { headers: Record<string, unknown>, cookies: Record<string, unknown> } | null
  }
}

// Where Fastify's messages name each part, the names the service's answers have always used.
const PART_NAMES: Record<Location, string> = { path: 'params', query: 'querystring', header: 'headers', cookie: 'cookies' }

/** The properties an object schema names, through $refs and allOf; undefined when it names none. */
export function propertiesOf (doc: OpenApiDocument, schema: unknown, seen = new Set<unknown>()): string[] | undefined {
  const resolved = derefSchema(doc, schema)
  if (resolved === null || typeof resolved !== 'object' || seen.has(resolved)) return undefined
  seen.add(resolved)
  const names = [...Object.keys(resolved.properties ?? {}), ...(resolved.allOf ?? []).flatMap((part: unknown) => propertiesOf(doc, part, seen) ?? [])]
  return names.length === 0 ? undefined : [...new Set(names)]
}

/** The property's schema in an object schema, through $refs and allOf. */
export function propertySchema (doc: OpenApiDocument, schema: unknown, name: string, seen = new Set<unknown>()): unknown {
  const resolved = derefSchema(doc, schema)
  if (resolved === null || typeof resolved !== 'object' || seen.has(resolved)) return undefined
  seen.add(resolved)
  if (resolved.properties?.[name] !== undefined) return resolved.properties[name]
  for (const part of resolved.allOf ?? []) {
    const found = propertySchema(doc, part, name, seen)
    if (found !== undefined) return found
  }
  return typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : undefined
}

/**
 * The value with a single item made a list of one wherever its schema declares a list, through
 * objects' members: what a parameter or a form field read as text cannot say by itself
 * (`filter[tags]=a` for tags, a list).
 */
/** True for a structure within a structure (an object's object, a list of lists or objects), which no style spells in text. */
function nested (doc: OpenApiDocument, schema: unknown): boolean {
  const resolved = derefSchema(doc, schema) ?? {}
  switch (shapeOf(doc, resolved)) {
    case 'array': return shapeOf(doc, resolved.items) !== 'primitive'
    case 'object': return (propertiesOf(doc, resolved) ?? []).some((name) => shapeOf(doc, propertySchema(doc, resolved, name)) !== 'primitive') ||
      (typeof resolved.additionalProperties === 'object' && shapeOf(doc, resolved.additionalProperties) !== 'primitive')
    default: return false
  }
}

/**
 * The fields of a form body (application/x-www-form-urlencoded): each property of its schema a
 * query parameter with the style its encoding gives (form, exploded, by default); one no style
 * can spell, a structure within a structure, is JSON unless its encoding says otherwise (the
 * Encoding Object's default contentType for an object). The service, the mock and the verifier
 * all read and write forms by these.
 */
export function formFields (doc: OpenApiDocument, media: MediaSpec): ParameterSpec[] {
  const encoding: Record<string, any> = media.object.encoding ?? {}
  return (propertiesOf(doc, media.schema) ?? []).map((name): ParameterSpec => {
    const schema = (propertySchema(doc, media.schema, name) ?? {}) as JsonSchema
    const declared = encoding[name] ?? {}
    const style: string = declared.style ?? 'form'
    const contentType: string | undefined = declared.contentType ?? (declared.style === undefined && declared.explode === undefined && nested(doc, schema) ? 'application/json' : undefined)
    return { name, in: 'query', required: false, style, explode: declared.explode ?? style === 'form', schema, contentType: contentType !== undefined && /\bjson\b/.test(contentType) ? contentType : undefined, shape: shapeOf(doc, schema), object: {} }
  })
}

const formBodies = new WeakMap<MediaSpec, (text: string) => Record<string, unknown>>()

/** A form body's reader, as the engine reads one: each property of the schema a field, styled as its encoding says (parameters.ts), shaped as the schema's; made once a media type. The verifier reads back what it writes by it. */
export function formBody (doc: OpenApiDocument, media: MediaSpec): (text: string) => Record<string, unknown> {
  let read = formBodies.get(media)
  if (read === undefined) {
    const fields = formReader(formFields(doc, media), (spec) => propertiesOf(doc, spec.schema))
    formBodies.set(media, read = (text) => shaped(doc, media.schema, fields(text), false) as Record<string, unknown>)
  }
  return read
}

/**
 * A multipart body's parts as the schema's properties: a list where it declares one, else the
 * last; a structure (an object, a list of them) as JSON, OpenAPI's default for it, as is a part
 * its encoding or its own Content-Type says is JSON. The verifier reads back what it writes by it.
 */
export function multipartFields (doc: OpenApiDocument, media: MediaSpec, values: Record<string, unknown[]>): Record<string, unknown> {
  const encoding: Record<string, any> = media.object.encoding ?? {}
  const out: Record<string, unknown> = {}
  for (const [name, given] of Object.entries(values)) {
    const property = propertySchema(doc, media.schema, name)
    const shape = shapeOf(doc, property)
    const items = shape === 'array' ? derefSchema(doc, property)?.items : property
    const json = /\bjson\b/.test(encoding[name]?.contentType ?? '') || shapeOf(doc, items) === 'object'
    const parsed = given.map((value) => typeof value === 'string' && json ? parseOr(value) : value)
    out[name] = shape === 'array' ? parsed : parsed.at(-1)
  }
  return out
}

// An object whose members are all array indices: a list spelled by index in deepObject.
const INDEX = /^(0|[1-9]\d*)$/
const isIndexed = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0 && Object.keys(value).every((name) => INDEX.test(name))

/** `value` as its schema's shape has it; `indexed`, unless it is a whole form (whose fields are no list's items). */
function shaped (doc: OpenApiDocument, schema: unknown, value: unknown, indexed = true): unknown {
  if (value === undefined || schema === undefined) return value
  const shape = shapeOf(doc, schema)
  if (shape === 'array') {
    // A single value is a list of one; one spelled by index (name[a][0]=x, as qs and Stripe's
    // clients write a list in deepObject, at any depth) is its items, in their order.
    const list = Array.isArray(value) ? value : indexed && isIndexed(value) ? Object.values(value) : [value]
    const items = derefSchema(doc, schema)?.items
    return items === undefined ? list : list.map((item) => shaped(doc, items, item))
  }
  if (shape !== 'object' || value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const out: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(value)) out[name] = shaped(doc, propertySchema(doc, schema, name), member)
  return out
}

/** One location's parameters as one object schema: each by its name, the required ones required. */
function locationSchema (parameters: ParameterSpec[]): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
    required: parameters.filter((p) => p.required).map((p) => p.name)
  }
}

/** Checks `data`: the 400 naming `part` when it does not pass. Returned, not thrown: a throw costs a 400 more than its check. */
function check (validate: ValidateFunction | null | undefined, data: unknown, part: string): Error | undefined {
  return validate == null || validate(data) ? undefined : validationError(validate.errors, part)
}

const NO_PARAMETERS = Object.freeze({ headers: Object.freeze({}), cookies: Object.freeze({}) })

/**
 * Reads and checks a request: the 400 its first check fails with, or a promise of it once a
 * body still to be read is read. Faults of form (a 415, 413, a malformed value) are thrown, or rejected.
 */
export type RequestValidation = (request: FastifyRequest) => Promise<Error | undefined> | Error | undefined

/** A request's parameters as the engine reads them: from its router's path parameters, its URL and its headers. */
export type ParameterSource = Pick<FastifyRequest, 'params' | 'url' | 'headers'> & Partial<Pick<FastifyRequest, 'query' | 'openapi'>>

/**
 * The check of an operation's parameters: each read as its style says, converted as its schema
 * says, and validated; on the way, the request's params, query and openapi are set to what was
 * read. The service's requests pass it, and the verifier's, before they are sent.
 */
export function parameterValidation (route: RouteSpec, doc: OpenApiDocument, validators: Validators): (request: ParameterSource) => Error | undefined {
  const read = parameterReader(route.parameters, route.pathNames, (p) => propertiesOf(doc, p.schema))
  // Per location: the parameters given as text (converted by their schemas), and those given by content (parsed already).
  const byLocation = (['path', 'query', 'header', 'cookie'] as const).map((location) => {
    const here = route.parameters.filter((p) => p.in === location)
    const text = here.filter((p) => p.contentType === undefined)
    const content = here.filter((p) => p.contentType !== undefined)
    return {
      location,
      text: text.length === 0 ? undefined : validators.text(locationSchema(text)),
      content: content.length === 0 ? undefined : validators.request(locationSchema(content))
    }
  }).filter((entry) => entry.text !== undefined || entry.content !== undefined)

  return (request) => {
    const parts: Parts = read(request as FastifyRequest)
    for (const parameter of route.parameters) {
      const values = parts[parameter.in]
      if (parameter.name in values && parameter.contentType === undefined) values[parameter.name] = shaped(doc, parameter.schema, values[parameter.name])
    }
    for (const { location, text, content } of byLocation) {
      const values = parts[location]
      if (content !== undefined) {
        const given = Object.fromEntries(route.parameters.filter((p) => p.in === location && p.contentType !== undefined && p.name in values).map((p) => [p.name, values[p.name]]))
        const fault = check(content, given, PART_NAMES[location])
        if (fault !== undefined) return fault
      }
      const fault = check(text, values, PART_NAMES[location])
      if (fault !== undefined) return fault
    }
    if (route.parameters.some((p) => p.in === 'path')) request.params = parts.path
    if (route.parameters.some((p) => p.in === 'query')) request.query = parts.query
    request.openapi = { headers: parts.header, cookies: parts.cookie }
  }
}

export function requestValidation (route: RouteSpec, doc: OpenApiDocument, validators: Validators, limits: Limits): RequestValidation {
  const parameters = parameterValidation(route, doc, validators)
  // A body's schema checks JSON as JSON (no value converted), and what was read as text (a form, a
  // part) with its text converted: by how the request's body was read, which under a range the
  // document writes (*/*) is the request's own media type, not the range's.
  const bodyValidators = { json: new Map<MediaSpec, ValidateFunction | null>(), text: new Map<MediaSpec, ValidateFunction | null>() }
  const bodyValidator = (media: MediaSpec, read: 'json' | 'text' = kindOf(media.type) === 'json' ? 'json' : 'text'): ValidateFunction | null => {
    const made = bodyValidators[read]
    if (!made.has(media)) made.set(media, media.schema === undefined ? null : (read === 'json' ? validators.request : validators.text)(media.schema))
    return made.get(media)!
  }

  const body = (request: FastifyRequest): Promise<Error | undefined> | Error | undefined => {
    const spec = route.body!
    const type = mediaTypeOf(request)
    // Fastify reads no body of a GET or HEAD; one the document declares is read here.
    if (request.body === undefined && (request.method === 'GET' || request.method === 'HEAD') && carriesBody(request.headers) && !isMultipart(request)) {
      return readBody(request, limits.bodyBytes).then((bytes) => {
        request.body = kindOf(type ?? '') === 'json' ? parseJsonBody(bytes.toString('utf8')) : kindOf(type ?? '') === 'bytes' ? bytes : bytes.toString('utf8')
        return body(request)
      })
    }
    if (request.body === undefined && !(isMultipart(request) && carriesBody(request.headers))) {
      // As Fastify has it: a missing body is checked as null, so that "body must be object" says what to send.
      return spec.required ? check(bodyValidator(spec.media[0]), null, 'body') : undefined
    }
    const media = matchMedia(spec.media, type)
    if (media === undefined) throw unsupported(request.headers['content-type'], spec.media)
    const read = kindOf(type!)
    const validate = bodyValidator(media, read === 'json' ? 'json' : 'text')
    switch (read) {
      case 'json':
        return check(validate, request.body, 'body')
      case 'form': {
        checkFieldCount(request.body as string, limits.parts)
        const form = formBody(doc, media)(request.body as string)
        request.body = form
        return check(validate, form, 'body')
      }
      case 'multipart':
        return readMultipart(request, limits).then(({ body: given, view }) => {
          const checked = multipartFields(doc, media, view)
          const fault = check(validate, checked, 'body')
          if (fault !== undefined) return fault
          // The handler gets the fields as checked (converted), and each file as it came.
          const files = multipartFields(doc, media, given)
          request.body = Object.fromEntries(Object.keys(files).map((name) => [name, isFile(files[name]) ? files[name] : checked[name]]))
        })
      case 'text':
        // Text is checked where its schema describes text; XML's describes the document's structure.
        return shapeOf(doc, media.schema) === 'primitive' ? check(validate, request.body, 'body') : undefined
      default:
        // Bytes: JSON Schema says nothing of them.
        return undefined
    }
  }

  const hasParameters = route.parameters.length > 0
  return (request) => {
    if (hasParameters) {
      const fault = parameters(request)
      if (fault !== undefined) return fault
    } else request.openapi = NO_PARAMETERS
    if (route.body !== undefined) return body(request)
  }
}

/** The raw body, within `limit` bytes (413 past it). */
async function readBody (request: FastifyRequest, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of bodyStreamOf(request)) {
    size += (chunk as Buffer).length
    if (size > limit) throw new PayloadTooLargeError()
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

const isFile = (value: unknown): boolean => Array.isArray(value) ? value.some(isFile) : value !== null && typeof value === 'object' && Buffer.isBuffer((value as { data?: unknown }).data)

function parseOr (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
