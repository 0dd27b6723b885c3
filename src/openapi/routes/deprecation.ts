import type { onRequestHookHandler } from 'fastify'

// What the document says of a deprecated operation, on every answer of it (a 200, a 401, a 503):
// `deprecated: true`, one line, becomes RFC 9745's Deprecation header, and `x-sunset`, the date
// it goes away, RFC 8594's Sunset (an HTTP-date). RFC 9745's value is a date (`@` and Unix
// seconds): `x-deprecated-at` when the document gives the day it took effect, else the Unix epoch,
// a date in the past, which says "deprecated" and claims no day. A bad date stops the start,
// naming the operation.

export interface Deprecation {
  /** The Deprecation header's value. */
  deprecation: string
  /** The Sunset header's value, when the document gives one. */
  sunset?: string
}

function dateOf (value: unknown, where: string): Date {
  const date = value instanceof Date ? value : new Date(typeof value === 'string' ? value : NaN)
  if (Number.isNaN(date.getTime())) throw new Error(`${where} must be a date (RFC 3339, as 2027-06-30 or 2027-06-30T00:00:00Z), got ${JSON.stringify(value)}`)
  return date
}

/** The operation's deprecation headers; undefined when it is not deprecated. */
export function deprecationOf (operation: Record<string, unknown>, where: string): Deprecation | undefined {
  if (operation.deprecated !== true) {
    if (operation['x-sunset'] !== undefined) throw new Error(`${where} has x-sunset but is not deprecated: add deprecated: true and x-deprecated-at`)
    return undefined
  }
  const since = operation['x-deprecated-at'] === undefined ? new Date(0) : dateOf(operation['x-deprecated-at'], `${where}: x-deprecated-at`)
  const headers: Deprecation = { deprecation: `@${Math.floor(since.getTime() / 1000)}` }
  if (operation['x-sunset'] !== undefined) {
    const sunset = dateOf(operation['x-sunset'], `${where}: x-sunset`)
    if (sunset < since) throw new Error(`${where}: x-sunset comes before x-deprecated-at`)
    headers.sunset = sunset.toUTCString()
  }
  return headers
}

/** Sets the headers first thing, so that every answer carries them, refusals too. */
export function deprecationHeaders ({ deprecation, sunset }: Deprecation): onRequestHookHandler {
  return (_request, reply, done) => {
    reply.header('deprecation', deprecation)
    if (sunset !== undefined) reply.header('sunset', sunset)
    done()
  }
}
