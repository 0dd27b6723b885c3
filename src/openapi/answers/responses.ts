import type { FastifyReply, FastifyRequest } from 'fastify'
import Negotiator from 'negotiator'
import { NotAcceptableError, ResponseValidationError } from '../../errors.ts'
import { bareType, kindOf } from '../requests/bodies.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { MediaSpec, ResponseSpec, RouteSpec } from '../routes/routes.ts'
import { standaloneSchema, type JsonSchema } from '../schemas/schema.ts'
import { lazySchema } from './serialization.ts'
import { errorsText, type Validators } from '../schemas/validation.ts'

// Answers as the document says them: the Response Object of a status is its own, else its range's
// (2XX), else `default`; its media type is the one the handler names, else the one the client's
// Accept prefers among those declared, with the parameters the document gives it: an Accept that
// names them (application/json; charset=utf-8) asks for what is declared. A request whose Accept
// takes none of what an operation answers gets 406 before its handler runs where the operation
// declares it may answer 406 (its own, 4XX or default); elsewhere the Accept is disregarded, as RFC 9110 allows, and the declared
// type is sent, so that no answer leaves the document. JSON bodies are serialized through their
// schema's serialize view (writeOnly properties never sent). In response validation (VALIDATE_RESPONSES),
// every answer is checked against the document first, its body and its declared headers, and one
// that breaks it fails with a 500 that names the operation and the property, logged in full.

/** What a handler answers: a status the document declares, its body, and optionally its headers and media type. */
export interface Answer { status: number, body?: unknown, headers?: Record<string, string | number | string[]>, contentType?: string }

/** The Response Object for a status: its own, else its range's, else default. */
export function responseFor (responses: ResponseSpec[], status: number): ResponseSpec | undefined {
  const code = String(status)
  return responses.find((r) => r.status === code) ?? responses.find((r) => r.status === `${code[0]}XX`) ?? responses.find((r) => r.status === 'default')
}

const isJson = (media: MediaSpec) => kindOf(media.type) === 'json' || media.type === '*/*'

/**
 * Fastify's response schemas for the route: each status's JSON schemas, by media type when it
 * answers several, for fast-json-stringify, made and compiled when first used (serialization.ts).
 */
export function serializationSchemas (route: RouteSpec, doc: OpenApiDocument, file: string): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {}
  for (const response of route.responses) {
    const json = response.media.filter((media) => isJson(media) && media.schema !== undefined && !media.type.includes('*'))
    if (json.length === 0) continue
    // Fastify spells status ranges 2xx where OpenAPI spells them 2XX.
    const status = response.status.toLowerCase()
    const schemaOf = (media: MediaSpec) => lazySchema(() => standaloneSchema(doc, media.schema!, 'serialize', file))
    out[status] = json.length === 1 && json[0].type === 'application/json'
      ? schemaOf(json[0])
      : { content: Object.fromEntries(json.map((media) => [media.type, { schema: schemaOf(media) }])) }
  }
  return out
}

/** The media types an operation's successful answers come in: what its client's Accept must take. */
function answeredTypes (route: RouteSpec): string[] {
  const success = route.responses.filter((r) => r.status.startsWith('2') || r.status === 'default')
  return [...new Set(success.flatMap((r) => r.media.map((media) => media.spelled)))]
}

/** The 406 a request gets before the handler runs, when it accepts none of what the operation answers; no check for an operation that answers anything, or declares no 406. */
export function acceptCheck (route: RouteSpec): ((request: FastifyRequest) => Error | undefined) | undefined {
  const types = answeredTypes(route)
  if (types.length === 0 || types.some((type) => type.includes('*')) || responseFor(route.responses, 406) === undefined) return undefined
  return (request) => {
    const accept = request.headers.accept
    // The common cases without parsing: no Accept, anything, or the one type answered named plainly.
    if (accept === undefined || accept === '*/*' || (types.length === 1 && accept === types[0])) return undefined
    return new Negotiator({ headers: { accept } }).mediaTypes(types).length === 0 ? new NotAcceptableError(accept, types.join(', ')) : undefined
  }
}

/** The media type to answer in, as the document spells it: the handler's, else the best the client accepts among the declared ones. */
function chooseType (declared: MediaSpec[], request: FastifyRequest, given?: string): string | undefined {
  if (given !== undefined) return declared.find((media) => media.type === bareType(given))?.spelled ?? given
  if (declared.length <= 1) return declared[0]?.spelled
  const types = declared.map((media) => media.spelled).filter((type) => !type.includes('*'))
  const accept = request.headers.accept
  return (accept === undefined ? undefined : new Negotiator({ headers: { accept } }).mediaType(types)) ?? types[0]
}

/** How the route's handlers' answers are sent, checked against the document in response validation. */
export function answerer (route: RouteSpec, validators: Validators | undefined): (request: FastifyRequest, reply: FastifyReply, answer: Answer) => FastifyReply {
  const bodyChecks = new Map<MediaSpec, ReturnType<Validators['response']> | null>()
  const bodyCheck = (media: MediaSpec, validators: Validators): ReturnType<Validators['response']> | null => {
    if (!bodyChecks.has(media)) bodyChecks.set(media, media.schema === undefined || !isJson(media) ? null : validators.response(media.schema))
    return bodyChecks.get(media)!
  }
  // Each answer's declared headers as one object schema (their names in lower case, as sent).
  const headerChecks = new Map<ResponseSpec, ReturnType<Validators['text']>>()
  const headerCheck = (response: ResponseSpec, validators: Validators): ReturnType<Validators['text']> => {
    if (!headerChecks.has(response)) {
      const declared = Object.entries(response.headers).filter(([name]) => name.toLowerCase() !== 'content-type')
      headerChecks.set(response, validators.text({
        type: 'object',
        properties: Object.fromEntries(declared.map(([name, header]) => [name.toLowerCase(), header.schema ?? {}])),
        required: declared.filter(([, header]) => header.required === true).map(([name]) => name.toLowerCase())
      }))
    }
    return headerChecks.get(response)!
  }
  /** Throws the 500 of an answer that breaks the document. */
  const validate = (validators: Validators, response: ResponseSpec | undefined, type: string | undefined, status: number, body: unknown, reply: FastifyReply): void => {
    const broken = (what: string) => new ResponseValidationError(route.operationId, status, what)
    if (response === undefined) throw broken('which the document does not declare')
    const bare = type === undefined ? undefined : bareType(type)
    const media = response.media.find((m) => m.type === bare) ?? response.media.find((m) => bare !== undefined && (m.type === '*/*' || (m.type.endsWith('/*') && bare.startsWith(m.type.slice(0, -1)))))
    if (response.media.length > 0 && media === undefined) throw broken(`in ${type}, which the document does not declare for it`)
    const check = media === undefined ? null : bodyCheck(media, validators)
    // A string in a JSON type is JSON already, as Fastify sends it.
    const value = typeof body === 'string' && media !== undefined && isJson(media) ? JSON.parse(body) : body
    if (check !== null && !check(value)) throw broken(errorsText(check.errors, 'body'))
    const headers = headerCheck(response, validators)
    const sent = Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]))
    if (!headers(sent)) throw broken(errorsText(headers.errors, 'headers'))
  }
  return (request, reply, { status, body, headers, contentType }) => {
    const response = responseFor(route.responses, status)
    const type = response === undefined ? undefined : chooseType(response.media, request, contentType)
    if (headers !== undefined) reply.headers(headers)
    // An operation that declares no answer says nothing to check one against.
    if (validators !== undefined && route.responses.length > 0) validate(validators, response, type, status, body, reply)
    reply.code(status)
    // JSON is Fastify's own, but for a body serialized already; another type is named.
    if (type !== undefined && !type.includes('*') && (type !== 'application/json' || typeof body === 'string')) reply.type(type)
    return reply.send(body)
  }
}
