import { parseExactJson } from '../../http/json-body.ts'
import { responseFor } from '../answers/responses.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { bareType, kindOf, matchMedia } from '../requests/bodies.ts'
import type { RouteSpec } from '../routes/routes.ts'
import { derefSchema, writeOnlyIn } from '../schemas/schema.ts'
import { errorsText, type Validators } from '../schemas/validation.ts'
import type { Case } from './cases.ts'

// What the verifier judges of an answer, each a check of its own, named as Schemathesis names its
// checks, and each one can be switched off. Of every answer: no 5xx; a status the operation
// declares (its own code, its range, or default); a Content-Type declared for that status; a body
// valid against its schema, by the engine's validators (writeOnly properties never sent); the
// headers the document requires of it, there and valid. (An invalid request's refusal with a 4xx
// the operation does not declare is left to negative_data_rejection.) Of a valid request's: not
// refused for its content (400, 415, 422). Of an invalid request's: refused with a 4xx. Of one sent
// without the credentials the operation requires, or with stand-ins for the ones given: not
// answered as if it had them. Of one of a method its path does not declare: 405, with Allow. Of a
// request a link made from a POST's or PUT's success (links.ts): not answered 404, as if nothing
// had been made; the same, and the other checks of a conversation, in the sequences of sequences.ts.

export const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'response_headers_conformance',
  'positive_data_acceptance',
  'negative_data_rejection',
  'ignored_auth',
  'unsupported_method',
  'ensure_resource_availability',
  // Of sequences of requests (sequences.ts).
  'use_after_free',
  'read_after_write',
  'unique_keys'
] as const

// What the proxy (openapi/proxy/) judges of one exchange of live traffic: the checks above that
// need no sequence, and whether the client's request is one the document allows.
export const EXCHANGE_CHECKS = CHECKS.slice(0, CHECKS.indexOf('ensure_resource_availability'))
export const PROXY_CHECKS = ['request_conformance', ...EXCHANGE_CHECKS] as const
export type CheckName = typeof CHECKS[number] | 'request_conformance'

/** An answer as it came back. */
export interface Answer { status: number, headers: Record<string, string | undefined>, body: Buffer }
/** An answer to judge: without its body where that was too large to judge (the proxy's). */
export type JudgedAnswer = Omit<Answer, 'body'> & { body?: Buffer }

export interface Violation { check: CheckName, status: number, detail: string }

/** What a transport throws for a request it would not send, or an answer it stopped reading: its own bound, not the service's failure. */
export class VerifierLimit extends Error {}

/** No answer at all (a connection refused or cut, none in time) is the service failing, as a 5xx is: status 0. Not what the verifier's own bounds stopped. */
export const noAnswer = (error: Error, enabled: ReadonlySet<CheckName>): Violation[] =>
  error instanceof VerifierLimit || !enabled.has('not_a_server_error') ? [] : [{ check: 'not_a_server_error', status: 0, detail: `no answer: ${error.message}` }]

// What a refusal says when the request is valid but names data that is not there (a project, an
// invite): Schemathesis' most reported false alarm, told apart in the violation's words.
const MISSING_DATA = /\b(not found|not exist|(does|do)n't exist|no such|unknown \w+ (id|key|name))\b/i

// The statuses that refuse a request for what it holds, where the verifier sent one the document allows.
const CONTENT_REFUSALS = new Set([400, 415, 422])

/** The exchange a linked request follows: its operation and its answer's status. */
export interface LinkedFrom { method: string, path: string, status: number, link: string }

/**
 * What a request was: valid, or invalid for a fault (the verifier's own, or the engine's reason),
 * and where its values came from; `conditional` where it carried a precondition of HTTP's own
 * (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since: a browser's cache sends them),
 * `upgrade` where it asked to switch protocols (a WebSocket's handshake).
 */
export type Sent = Pick<Case, 'source' | 'breaks'> & { fault?: string, conditional?: boolean, upgrade?: boolean }

export interface Judge { (sent: Sent, answer: JudgedAnswer, from?: LinkedFrom): Violation[] }

/** A judge of the operation's answers, by the checks in `enabled`. */
export function judge (doc: OpenApiDocument, route: RouteSpec, validators: Validators, enabled: ReadonlySet<CheckName>): Judge {
  // An operation that declares no success, and yet some answer (stream-io's WebSocket, contract-p's
  // stats: 400 and 403 alone), promises no valid request is taken: a refusal is all it can answer.
  const accepts = route.responses.length === 0 || route.responses.some((r) => /^2|^default$/i.test(r.status))
  return (sent, answer, from) => {
    const out: Violation[] = []
    const { status } = answer
    const fail = (check: CheckName, detail: string): void => { if (enabled.has(check)) out.push({ check, status, detail }) }

    if (status >= 500) fail('not_a_server_error', `answered ${status}`)
    // A method the path does not declare is no request of the operation's: HTTP's answer is all
    // there is to judge, 405 with the Allow header that lists the methods it takes (RFC 9110 §15.5.6).
    if (sent.fault === 'undeclared method') {
      if (status !== 405) fail('unsupported_method', `a method the path does not declare answered ${status}, not 405`)
      else if (answer.headers.allow === undefined) fail('unsupported_method', '405 without the Allow header that lists the methods the path takes')
      return out
    }
    if (sent.fault === undefined && CONTENT_REFUSALS.has(status) && accepts) {
      const missing = MISSING_DATA.test(answer.body?.toString('utf8').slice(0, 2000) ?? '') ? ' (the answer says what it names does not exist: valid, but about data that is not there; make it first, or send what exists)' : ''
      fail('positive_data_acceptance', `a valid request (${sent.source}) refused with ${status}${missing}: ${excerpt(answer.body)}`)
    }
    if (sent.fault === 'no credentials' && status < 400) fail('ignored_auth', `answered ${status} to a request without the credentials the operation requires`)
    else if (sent.fault === 'wrong credentials' && status < 400) fail('ignored_auth', `answered ${status} to a request with stand-ins of the right form in place of the credentials given: credentials it cannot have issued`)
    else if (sent.fault !== undefined && status < 400) fail('negative_data_rejection', `an invalid request (${sent.fault}${sent.breaks === undefined ? '' : `, ${sent.breaks}`}) accepted with ${status}`)
    if (from !== undefined && (from.method === 'POST' || from.method === 'PUT') && from.status >= 200 && from.status < 300 && status === 404) {
      fail('ensure_resource_availability', `answered 404 to what link ${from.link} of ${from.method} ${from.path}'s ${from.status} names`)
    }

    // An invalid request refused with a 4xx is what negative_data_rejection asks for, declared or
    // not: documents seldom declare every refusal.
    const refusal = sent.fault !== undefined && status >= 400 && status < 500
    if (route.responses.length === 0) {
      // An operation that declares no answer at all is answered by any success.
      if ((status < 200 || status >= 300) && !refusal) fail('status_code_conformance', `status ${status}, where the operation declares no answer`)
      return out
    }
    const response = responseFor(route.responses, status)
    // A precondition's answer is HTTP's (RFC 9110 §13.1), declared or not: 304 to a read's, 412 to
    // another's; so is the switch an upgrade asked for (101, §7.8).
    const precondition = sent.conditional === true && (status === 412 || (status === 304 && (route.method === 'GET' || route.method === 'HEAD')))
    const switched = sent.upgrade === true && status === 101
    if (response === undefined) {
      if (!refusal && !precondition && !switched) fail('status_code_conformance', `status ${status}, which the operation does not declare (it declares ${route.responses.map((r) => r.status).join(', ')})`)
      return out
    }

    for (const [name, header] of Object.entries(response.headers)) {
      if (header.required !== true || name.toLowerCase() === 'content-type') continue
      const value = answer.headers[name.toLowerCase()]
      if (value === undefined) {
        fail('response_headers_conformance', `${status} without the ${name} header it requires`)
        continue
      }
      const schema = header.schema ?? header.content?.[Object.keys(header.content)[0]]?.schema
      if (schema === undefined) continue
      // A header's value is text, a list's items separated by commas (style simple), as the engine reads parameters.
      const list = [derefSchema(doc, schema)?.type].flat().includes('array')
      const validate = validators.text(schema)
      if (!validate(list ? value.split(',').map((item) => item.trim()) : value)) fail('response_headers_conformance', `${status} ${name}: ${JSON.stringify(value)} breaks its schema: ${errorsText(validate.errors)}`)
    }

    // No content, whatever the document says of it: HTTP sends none with a 1xx, a 204 or a 304, nor
    // to a HEAD (after a 101, what passes is another protocol's).
    if (response.media.length === 0 || status < 200 || status === 204 || status === 304 || route.method === 'HEAD') return out
    const header = answer.headers['content-type']
    const type = header === undefined ? undefined : bareType(header)
    const media = matchMedia(response.media, type)
    if (media === undefined) {
      fail('content_type_conformance', `${status} in ${type ?? 'no media type'}, which the operation does not declare for it (${response.media.map((m) => m.type).join(', ')})`)
      return out
    }
    if (media.schema === undefined || type === undefined || kindOf(type) !== 'json' || answer.body === undefined) return out
    let value: unknown
    try {
      value = parseExactJson(answer.body.toString('utf8'))
    } catch {
      fail('response_schema_conformance', `${status} ${type}: the body is not JSON: ${excerpt(answer.body)}`)
      return out
    }
    const validate = validators.response(media.schema)
    if (!validate(value)) fail('response_schema_conformance', `${status} ${type}: the body breaks its schema: ${errorsText(validate.errors)}`)
    const writeOnly = writeOnlyIn(doc, media.schema, value, validators)
    if (writeOnly !== undefined) fail('response_schema_conformance', `${status} ${type}: ${writeOnly} is writeOnly, never to be sent`)
    return out
  }
}

const excerpt = (body: Buffer | undefined): string => JSON.stringify(body?.toString('utf8').slice(0, 200) ?? '')
