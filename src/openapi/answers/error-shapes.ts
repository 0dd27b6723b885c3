import { randomUUID } from 'node:crypto'
import type { OpenApiDocument } from '../document/document.ts'
import { concreteType, kindOf, matchMedia } from '../requests/bodies.ts'
import type { MediaSpec, ResponseSpec, RouteSpec } from '../routes/routes.ts'
import { examplesOf } from '../schemas/examples.ts'
import { validSample } from '../schemas/samples.ts'
import { derefSchema } from '../schemas/schema.ts'
import { responseFor } from './responses.ts'
import type { Validators } from '../schemas/validation.ts'

// Errors in the shape the document declares for their status, where it can be filled in with a
// status and a message: an object whose required properties are at most an integer property
// that can hold the status (error, code, status…) and a string property for the message
// (message, detail…), which the result passes. The Plant Store's Error, {error, message}, is one.
// Where the operation declares the status in media types none of which can take the message, the
// answer keeps to them still: problem details where they take those (in the JSON type declared,
// where that is not theirs), the message as text in a text type, else the document's example of
// that answer, or a value of its schema (samples.ts), else the message as the bytes of a byte
// type it declares (application/octet-stream), or as the one field of a form it declares. A
// status the operation does not declare takes the shape its document's errors share; where
// nothing fits, RFC 9457's problem details (application/problem+json).

/** An error's answer: its body, and its media type. */
export interface ErrorBody { body: unknown, type: string }
/** Writes the answer of an error with `status` and `message`. */
export type ErrorWriter = (status: number, message: string) => ErrorBody

const STATUS_NAMES = ['error', 'code', 'status', 'statusCode', 'status_code', 'errorCode', 'error_code', 'httpStatus', 'httpCode']
const MESSAGE_NAMES = ['message', 'detail', 'details', 'error_description', 'errorMessage', 'error_message', 'description', 'msg', 'title', 'reason', 'error']
const PROBLEM = 'application/problem+json'

/** RFC 9457's problem details: the status, its reason phrase as title, and the message as detail. */
export function problemDetails (status: number, message: string, title: string): ErrorBody {
  return { body: JSON.stringify({ type: 'about:blank', title, status, detail: message }), type: PROBLEM }
}

interface Fill { status?: string, message?: string }

/** How an object schema takes a status and a message; undefined when it cannot. */
function fillOf (doc: OpenApiDocument, schema: unknown): Fill | undefined {
  const resolved = derefSchema(doc, schema)
  const parts = [resolved, ...(resolved?.allOf ?? []).map((part: unknown) => derefSchema(doc, part))].filter((part) => part !== null && typeof part === 'object')
  const properties: Record<string, any> = Object.assign({}, ...parts.map((part) => part.properties ?? {}))
  const required = new Set<string>(parts.flatMap((part) => Array.isArray(part.required) ? part.required : []))
  const typeOf = (name: string): string[] => [derefSchema(doc, properties[name])?.type ?? []].flat()
  const status = STATUS_NAMES.find((name) => name in properties && typeOf(name).some((t) => t === 'integer' || t === 'number'))
  const message = MESSAGE_NAMES.find((name) => name !== status && name in properties && typeOf(name).includes('string'))
  if (status === undefined && message === undefined) return undefined
  if ([...required].some((name) => name !== status && name !== message)) return undefined
  return { status, message }
}

/** The Content-Type of an answer in `media`: as the document spells it, a range as the type it answers in (*\/* as JSON); JSON's in UTF-8, as Fastify sends it. */
function contentTypeOf (media: MediaSpec): string {
  const type = media.type.includes('*') ? concreteType(media.type) : media.spelled
  return type === 'application/json' ? 'application/json; charset=utf-8' : type
}

/** A JSON type, or a range answered in one (*\/*, application/*+json). */
const isJson = (media: MediaSpec): boolean => kindOf(concreteType(media.type)) === 'json'

/** A writer for one media type's schema, or undefined when the schema cannot take an error (or its result breaks it). */
function writerOf (doc: OpenApiDocument, media: MediaSpec | undefined, validators: Validators): ErrorWriter | undefined {
  if (media === undefined || media.schema === undefined || !isJson(media)) return undefined
  const fill = fillOf(doc, media.schema)
  if (fill === undefined) return undefined
  const write = (status: number, message: string): Record<string, unknown> => {
    const body: Record<string, unknown> = {}
    if (fill.status !== undefined) body[fill.status] = status
    if (fill.message !== undefined) body[fill.message] = message
    return body
  }
  // The schema may bound what it takes (an enum of codes, a minimum): it must take a plain error.
  const valid = validators.response(media.schema)
  if (!valid(write(500, 'An error'))) return undefined
  const type = contentTypeOf(media)
  return (status, message) => ({ body: write(status, message), type })
}

/** A writer for a status the operation declares, in a media type it declares for it: the message where one can take it. */
function declaredWriter (doc: OpenApiDocument, response: ResponseSpec, validators: Validators, problem: ErrorWriter): ErrorWriter {
  const json = response.media.find(isJson)
  const filled = writerOf(doc, json, validators)
  if (filled !== undefined) return filled
  // No content declared, or one that takes problem details (*/*, application/*+json…) where its schema does too.
  const ranged = matchMedia(response.media, PROBLEM)
  const takesProblem = (media: MediaSpec): boolean => media.schema === undefined || validators.response(media.schema)(JSON.parse(problem(500, 'An error').body as string))
  if (response.media.length === 0 || (ranged !== undefined && takesProblem(ranged))) return problem
  // A JSON type that takes any JSON (no schema, as xtrf's `default`), or problem details: those, in that type.
  if (json !== undefined && takesProblem(json)) return (status, message) => ({ body: problem(status, message).body, type: contentTypeOf(json) })
  const text = response.media.find((m) => m.type.startsWith('text/') && !isJson(m))
  if (text !== undefined) return (_status, message) => ({ body: message, type: `${text.type === 'text/*' ? 'text/plain' : text.type}; charset=utf-8` })
  // A value in its media type's bytes: text as it is; JSON as JSON, a string too ("bad"), and so a
  // vendor type's object (application/vnd.goa.error), which no serializer of Fastify's writes.
  const typed = (media: MediaSpec, value: unknown): ErrorWriter => {
    const body = typeof value === 'string' && !isJson(media) ? value : JSON.stringify(value)
    return () => ({ body, type: contentTypeOf(media) })
  }
  // The document's own example of the answer, one its schema takes; else a sample of it (XML unchecked, as the mock answers it).
  for (const media of response.media) {
    const validate = isJson(media) && media.schema !== undefined ? validators.response(media.schema) : undefined
    const example = examplesOf(doc, media).find(({ value }) => validate === undefined || validate(value))
    if (example !== undefined) return typed(media, example.value)
  }
  if (json?.schema !== undefined) {
    const made = validSample(doc, json.schema, validators.response(json.schema), { direction: 'response' })
    if (made?.valid === true) return typed(json, made.value)
  }
  const xml = response.media.find((m) => m.type.endsWith('/xml') || m.type.endsWith('+xml'))
  if (xml?.schema !== undefined) {
    const made = validSample(doc, xml.schema, validators.response(xml.schema), { direction: 'response', xml: true })
    if (made !== undefined) return typed(xml, made.value)
  }
  // Bytes of a type the document names (application/octet-stream): the message is bytes enough.
  const bytes = response.media.find((m) => !m.type.includes('*') && kindOf(m.type) === 'bytes')
  if (bytes !== undefined) return (_status, message) => ({ body: message, type: bytes.spelled })
  // A form (xtrf's `default`, multipart/form-data): the message as its one field.
  const form = response.media.find((m) => !m.type.includes('*') && ['form', 'multipart'].includes(kindOf(m.type)))
  if (form !== undefined) return (_status, message) => formMessage(form, message)
  return problem
}

/** `message` as a form's one field, `message`: urlencoded, or a multipart part under a boundary of its own. */
function formMessage (media: MediaSpec, message: string): ErrorBody {
  if (kindOf(media.type) === 'form') return { body: new URLSearchParams({ message }).toString(), type: media.spelled }
  const boundary = `error-${randomUUID()}`
  return { body: `--${boundary}\r\nContent-Disposition: form-data; name="message"\r\n\r\n${message}\r\n--${boundary}--\r\n`, type: `${media.spelled}; boundary=${boundary}` }
}

/** The writers of a document's errors: one for each route's requests, one for requests that matched none. */
export function errorWriters (doc: OpenApiDocument, routes: RouteSpec[], validators: Validators, reasons: Record<number, string>): { forRoute: (route: RouteSpec) => ErrorWriter, fallback: ErrorWriter } {
  const problem: ErrorWriter = (status, message) => problemDetails(status, message, reasons[status] ?? 'Error')
  /** The shape most of the document's error answers share, the first of them an error can fill. */
  const sharedShape = (): ErrorWriter => {
    const counts = new Map<string, { count: number, media: MediaSpec }>()
    for (const route of routes) {
      for (const response of route.responses) {
        if (/^[23]/.test(response.status)) continue
        const media = response.media.find(isJson)
        if (media?.schema === undefined) continue
        const key = JSON.stringify(media.schema)
        counts.set(key, { count: (counts.get(key)?.count ?? 0) + 1, media })
      }
    }
    return [...counts.values()].sort((a, b) => b.count - a.count).map(({ media }) => writerOf(doc, media, validators)).find((writer) => writer !== undefined) ?? problem
  }
  // Made at the first error, not at start: it reads every error answer and compiles the shape's schema.
  let shared: ErrorWriter | undefined
  const fallback: ErrorWriter = (status, message) => (shared ??= sharedShape())(status, message)
  return {
    fallback,
    forRoute (route) {
      const writers = new Map<number, ErrorWriter>()
      return (status, message) => {
        let writer = writers.get(status)
        if (writer === undefined) {
          const response = responseFor(route.responses, status)
          writer = response === undefined ? fallback : declaredWriter(doc, response, validators, problem)
          writers.set(status, writer)
        }
        return writer(status, message)
      }
    }
  }
}
