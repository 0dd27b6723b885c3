import type { OpenApiDocument } from '../document/document.ts'
import { responseFor } from './responses.ts'
import type { MediaSpec, RouteSpec } from '../routes/routes.ts'
import { derefSchema } from '../schemas/schema.ts'
import type { Validators } from '../schemas/validation.ts'

// Errors in the shape the document declares for their status, where it can be filled in with a
// status and a message: an object whose required properties are at most an integer property
// that can hold the status (error, code, status…) and a string property for the message
// (message, detail…), which the result passes. The Plant Store's Error, {error, message}, is one.
// A status an operation does not declare takes the shape its document's errors share; where
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

/** A writer for one media type's schema, or undefined when the schema cannot take an error (or its result breaks it). */
function writerOf (doc: OpenApiDocument, media: MediaSpec | undefined, validators: Validators): ErrorWriter | undefined {
  if (media === undefined || media.schema === undefined || !(media.type === 'application/json' || media.type.endsWith('+json'))) return undefined
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
  const type = media.type === 'application/json' ? 'application/json; charset=utf-8' : media.type
  return (status, message) => ({ body: write(status, message), type })
}

/** The writers of a document's errors: one for each route's requests, one for requests that matched none. */
export function errorWriters (doc: OpenApiDocument, routes: RouteSpec[], validators: Validators, reasons: Record<number, string>): { forRoute: (route: RouteSpec) => ErrorWriter, fallback: ErrorWriter } {
  const problem: ErrorWriter = (status, message) => problemDetails(status, message, reasons[status] ?? 'Error')
  // The shape most of the document's error answers share.
  const counts = new Map<string, { count: number, media: MediaSpec }>()
  for (const route of routes) {
    for (const response of route.responses) {
      if (/^[23]/.test(response.status)) continue
      const media = response.media.find((m) => m.type === 'application/json' || m.type.endsWith('+json'))
      if (media?.schema === undefined) continue
      const key = JSON.stringify(media.schema)
      counts.set(key, { count: (counts.get(key)?.count ?? 0) + 1, media })
    }
  }
  const shared = [...counts.values()].sort((a, b) => b.count - a.count).map(({ media }) => writerOf(doc, media, validators)).find((writer) => writer !== undefined)
  const fallback = shared ?? problem
  return {
    fallback,
    forRoute (route) {
      const writers = new Map<number, ErrorWriter>()
      return (status, message) => {
        let writer = writers.get(status)
        if (writer === undefined) {
          const response = responseFor(route.responses, status)
          writer = response === undefined ? fallback : writerOf(doc, response.media.find((m) => m.type === 'application/json' || m.type.endsWith('+json')), validators) ?? problem
          writers.set(status, writer)
        }
        return writer(status, message)
      }
    }
  }
}
