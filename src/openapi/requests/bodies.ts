import type { BusboyInstance } from '@fastify/busboy'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import { BadMultipartError, PayloadTooLargeError, TooManyPartsError, UnsupportedMediaTypeError } from '../../errors.ts'
import { jsonBodyParser } from '../../http/json-body.ts'
import { carriesBody } from '../../http/message-body.ts'
import type { MediaSpec, RouteSpec } from '../routes/routes.ts'

// Request bodies of every common media type, chosen by the request's Content-Type among those
// the operation declares (a range the document writes, image/* or */*, included): JSON and its
// +json types (and text/json), parsed exactly (http/json-body.ts); forms (application/x-www-form-urlencoded),
// read as the query is; multipart/form-data, streamed by Fastify's busboy, each part within a limit
// and the whole within another; text/* as text; anything else as bytes. Fastify reads the body with the
// parser of its media type, and only the media types the document uses have one: the rest is
// answered 415 before the body is read.

export type BodyKind = 'json' | 'form' | 'multipart' | 'text' | 'bytes'

/** A file of a multipart body, as a handler gets it. */
export interface UploadedFile { filename: string, mimetype: string, data: Buffer }

/** How a body of this media type is read. */
export function kindOf (type: string): BodyKind {
  // text/json: JSON by an older name, which ASP.NET Web API's documents still declare (e-conomic's).
  if (type === 'application/json' || type === 'text/json' || type.endsWith('+json')) return 'json'
  if (type === 'application/x-www-form-urlencoded') return 'form'
  if (type.startsWith('multipart/')) return 'multipart'
  if (type.startsWith('text/') || type === 'application/xml' || type.endsWith('+xml')) return 'text'
  return 'bytes'
}

/**
 * True when the request's media type is in the range the document writes: image/* takes
 * image/png; application/*+json takes application/vnd.api+json, and application/json.
 */
function inRange (range: string, type: string): boolean {
  if (range === type || range === '*/*') return true
  const [kind, sub] = range.split('/')
  if (sub === '*') return type.startsWith(`${kind}/`)
  if (!sub.startsWith('*+')) return false
  const suffix = sub.slice(2)
  return type === `${kind}/${suffix}` || (type.startsWith(`${kind}/`) && type.endsWith(`+${suffix}`))
}

/** A media type without its parameters, in lower case: `Application/JSON; charset=utf-8` is application/json. */
export function bareType (type: string): string {
  const end = type.indexOf(';')
  return (end === -1 ? type : type.slice(0, end)).trim().toLowerCase()
}

/** The media type of a request (lower case, no parameters), or undefined without Content-Type. */
export function mediaTypeOf (request: FastifyRequest): string | undefined {
  const header = request.headers['content-type']
  return header === undefined ? undefined : bareType(header) || undefined
}

// A type of each range a document may write: what the mock answers in and the verifier sends for it.
const IN_RANGE: Record<string, string> = { '*/*': 'application/json', 'application/*': 'application/json', 'text/*': 'text/plain', 'image/*': 'image/png', 'audio/*': 'audio/mpeg', 'video/*': 'video/mp4' }

/** A concrete media type for one the document gives as a range: application/*+json's is application/json. */
export function concreteType (type: string): string {
  if (!type.includes('*')) return type
  const [kind, sub] = type.split('/')
  return IN_RANGE[type] ?? (sub.startsWith('*+') ? `${kind}/${sub.slice(2)}` : `${kind}/octet-stream`)
}

/** Which of the operation's media types the request's is: the exact one, else the narrowest range that takes it. */
export function matchMedia (declared: MediaSpec[], type: string | undefined): MediaSpec | undefined {
  if (type === undefined) return undefined
  return declared.find((media) => media.type === type) ??
    declared.filter((media) => inRange(media.type, type)).sort((a, b) => b.type.length - a.type.length)[0]
}

/** 415 for the Content-Type sent, naming what the operation takes. */
export function unsupported (type: string | undefined, declared: MediaSpec[]): Error {
  const types = declared.map((media) => media.type)
  return new UnsupportedMediaTypeError(type ?? 'none', types.length === 1 ? types[0] : `one of ${types.join(', ')}`)
}

/** The route a request is for, as register.ts tells the parsers, so that a 415 names what it takes. */
export interface BodyRoute { body?: RouteSpec['body'] }

/**
 * Registers in the API's scope a parser for each kind of body the routes take, and 415 for every
 * other media type. `routeOf` gives the spec of the route a request matched.
 */
export function bodyParsers (app: FastifyInstance, routes: RouteSpec[], routeOf: (request: FastifyRequest) => BodyRoute | undefined): void {
  const declared = routes.flatMap((route) => route.body?.media ?? [])
  const kinds = new Set(declared.map((media) => media.type.includes('*') ? undefined : kindOf(media.type)))
  const anything = declared.some((media) => media.type.includes('*'))
  // No content (Content-Length: 0, or no length at all) is no body, whatever type it names: where
  // the operation requires none, none is read (a client that sends its Content-Type on every
  // request, a DELETE's too). Where it requires one, the type's parser says what is missing.
  const parser = <Body>(parse: (request: FastifyRequest, body: Body, done: (err: Error | null, body?: unknown) => void) => void) =>
    (request: FastifyRequest, body: Body, done: (err: Error | null, body?: unknown) => void): void => {
      if (!carriesBody(request.headers) && routeOf(request)?.body?.required !== true) done(null, undefined)
      else parse(request, body, done)
    }
  const kept = parser<unknown>((_request, body, done) => done(null, body))
  app.removeAllContentTypeParsers()
  if (kinds.has('json') || anything) {
    const json = parser(jsonBodyParser)
    app.addContentTypeParser('application/json', { parseAs: 'string' }, json)
    app.addContentTypeParser('text/json', { parseAs: 'string' }, json)
    app.addContentTypeParser(/^[^/;\s]+\/[^;\s]+\+json(?:\s*;|$)/, { parseAs: 'string' }, json)
  }
  if (kinds.has('form') || anything) app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, kept)
  // Whatever kindOf calls text: a +xml type under any top-level type too (image/svg+xml, message/imdn+xml).
  if (kinds.has('text') || anything) app.addContentTypeParser(/^(text\/|application\/xml(?:\s*;|$)|[^/;\s]+\/[^;\s]+\+xml(?:\s*;|$))/, { parseAs: 'string' }, kept)
  // Left unread: its parts are streamed by the validation (readMultipart), which knows the operation.
  if (kinds.has('multipart') || anything) app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null))
  const bytes = new Set(declared.filter((media) => !media.type.includes('*') && kindOf(media.type) === 'bytes').map((media) => media.type))
  for (const type of bytes) app.addContentTypeParser(type, { parseAs: 'buffer' }, kept)
  // Every other media type: bytes, where the document takes a range; else 415, the body unread.
  if (anything) app.addContentTypeParser('*', { parseAs: 'buffer' }, kept)
  else app.addContentTypeParser('*', parser((request, _payload, done) => done(unsupported(request.headers['content-type'], routeOf(request)?.body?.media ?? declared))))
}

/** True for a request whose body is multipart, left unread by its parser. */
export const isMultipart = (request: FastifyRequest): boolean => mediaTypeOf(request) === 'multipart/form-data'

/** The bounds on a request body: its bytes, a multipart part's bytes, and its parts (or a form's fields). */
export interface Limits { bodyBytes: number, partBytes: number, parts: number }

/**
 * Throws the 413 of a form with more fields than `parts`, counted before any is read: a 1 MiB form
 * holds hundreds of thousands, each an object and a turn of the reader's loops.
 */
export function checkFieldCount (form: string, parts: number): void {
  let count = form === '' ? 0 : 1
  for (let at = form.indexOf('&'); at >= 0 && count <= parts; at = form.indexOf('&', at + 1)) count++
  if (count > parts) throw new TooManyPartsError(parts)
}

// Bodies given in place of a request's own, which has passed on already (the proxy's judge keeps a
// copy of it): what reads a body the engine's parsers leave unread (multipart, a GET's) reads these.
const givenBodies = new WeakMap<IncomingMessage, Readable>()

/** The body `request` is read from in place of its own: one given before its body is read. */
export function giveBody (request: IncomingMessage, body: Readable): void {
  givenBodies.set(request, body)
}

/** The stream a request's unparsed body is read from: its own, or one given in its place. */
export const bodyStreamOf = (request: FastifyRequest): Readable => givenBodies.get(request.raw) ?? request.raw

/**
 * A multipart body's fields and files, streamed from the request by Fastify's busboy, each part
 * within `partBytes`, the whole within `bodyBytes` and at most `parts` parts (413 past any, the
 * rest of the body drained unparsed): as a handler gets them,
 * each field by its name, in order; and as the validator checks them, each file as its bytes
 * (latin1: a string of its length).
 */
export async function readMultipart (request: FastifyRequest, { partBytes, bodyBytes, parts }: Limits): Promise<{ body: Record<string, unknown[]>, view: Record<string, unknown[]> }> {
  const { Busboy } = await import('@fastify/busboy')
  const source = bodyStreamOf(request)
  return await new Promise((resolve, reject) => {
    const body: Record<string, unknown[]> = Object.create(null)
    const view: Record<string, unknown[]> = Object.create(null)
    let total = 0
    let failed = false
    const fail = (error: Error): void => {
      if (failed) return
      failed = true
      // The rest of the body is read and dropped, so that the answer reaches the client.
      source.unpipe()
      source.resume()
      reject(error)
    }
    const add = (name: string, value: unknown, seen: unknown): void => {
      ;(body[name] ??= []).push(value)
      ;(view[name] ??= []).push(seen)
    }
    let parser: BusboyInstance
    try {
      parser = new Busboy({ headers: request.headers as { 'content-type': string }, limits: { fileSize: partBytes, fieldSize: partBytes, parts } })
    } catch (err) {
      return fail(new BadMultipartError((err as Error).message))
    }
    let open = 0
    let finished = false
    const settle = () => { if (finished && open === 0 && !failed) resolve({ body, view }) }
    parser.on('file', (name, stream, filename, _encoding, mimetype) => {
      const chunks: Buffer[] = []
      open++
      stream.on('limit', () => fail(new PayloadTooLargeError()))
      stream.on('data', (chunk: Buffer) => {
        total += chunk.length
        if (total > bodyBytes) fail(new PayloadTooLargeError())
        else chunks.push(chunk)
      })
      stream.on('end', () => {
        open--
        const data = Buffer.concat(chunks)
        add(name, { filename, mimetype, data } satisfies UploadedFile, data.toString('latin1'))
        settle()
      })
    })
    parser.on('field', (name, value: string, _nameTruncated, valueTruncated, _encoding, mimetype: string) => {
      total += Buffer.byteLength(value)
      if (valueTruncated || total > bodyBytes) return fail(new PayloadTooLargeError())
      // A part that says it is JSON is read as JSON (text if it is not).
      let parsed: unknown = value
      if (/\bjson\b/.test(mimetype)) {
        try {
          parsed = JSON.parse(value)
        } catch {}
      }
      add(name, parsed, parsed)
    })
    parser.on('partsLimit', () => fail(new TooManyPartsError(parts)))
    parser.on('error', (err: Error) => fail(new BadMultipartError(err.message)))
    parser.on('finish', () => {
      finished = true
      settle()
    })
    source.pipe(parser)
  })
}
