import { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload } from 'fastify'
import { DuplicateKeyError, ForbiddenKeyError, InexactNumberError, MethodNotAllowedError, MissingCredentialsError, TooDeepError } from '../../errors.ts'
import type { HttpConfig } from '../../http/config.ts'
import { carriesBody } from '../../http/message-body.ts'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { giveBody } from '../requests/bodies.ts'
import { engine } from '../routes/engine.ts'
import type { Refusal, RouteSpec } from '../routes/routes.ts'
import { createValidators } from '../schemas/validation.ts'
import { judge, type CheckName, type Judge, type Sent, type Violation } from '../verify/checks.ts'

// What the proxy decides of one exchange of live traffic, by the engine the mock and the service
// run on and the verifier's checks. The request, as the proxy received it (its body from the copy
// the proxy kept, the request's own having passed on), goes through the engine's own routes,
// parsing, validation and security (routes/engine.ts), whose handlers are never reached: what
// gets past every check is a request the document allows, what is refused names its fault in the
// engine's words. The answer is then judged as the verifier judges one (verify/checks.ts), knowing what
// the request was: a valid one refused, an invalid one or one without credentials accepted.

/** One request and its answer, as they passed; a body past the bound the proxy judges is left out. */
export interface Exchange {
  method: string
  /** The path and query, as the client sent them. */
  url: string
  headers: IncomingHttpHeaders
  /** The request as the proxy received it: the engine routes it as it is, its body read from `body`. */
  incoming: IncomingMessage
  body?: Buffer
  /** The client stopped sending the body once answered: there is none to judge. */
  cutOff?: boolean
  answer: { status: number, headers: IncomingHttpHeaders, body?: Buffer }
}

export interface Verdict {
  /** The operation the request is one of; none where the document has no operation for it. */
  route?: RouteSpec
  violations: Violation[]
  /** What was not judged, and why. */
  notes: string[]
}

export interface ExchangeJudge {
  /** `failure`: the upstream gave no answer, and the proxy answered for it: only the request is judged. */
  judge: (exchange: Exchange, failure?: string) => Promise<Verdict>
  /** The operations judged, and those the engine leaves out, with why. */
  routes: RouteSpec[]
  refused: Refusal[]
  /** How the document writes an error outside every operation (the proxy's own 502 and 504). */
  errorWriter: () => ErrorWriter
}

/** What the engine decided of a request: the status it would answer, and where it refused it, its operation (if any) and why. */
interface Decided { status: number, route?: RouteSpec, reason?: string, code?: string, url?: string }
/**
 * A request the engine is deciding: the body it reads in place of the request's own, which the
 * proxy has passed on; none where the request says it has none and names no media type (Fastify
 * reads a body where a Content-Type comes with a Content-Length of 0 too, a DELETE's, a POST's).
 */
interface Deciding { body?: Buffer, decided: Omit<Decided, 'status'>, done: (decided: Decided) => void }

/**
 * The engine's answer to a request it decides, which goes nowhere: its end is the decision, with
 * what the hooks found (`decided`). Every answer ends so, one Fastify writes past its hooks too
 * (its 400 for a path it cannot decode).
 */
class Decision extends ServerResponse {
  readonly deciding: Deciding

  constructor (incoming: IncomingMessage, deciding: Deciding) {
    super(incoming)
    this.deciding = deciding
  }

  override end (...args: any[]): this {
    super.end(...args)
    this.deciding.done({ ...this.deciding.decided, status: this.statusCode })
    return this
  }
}

/** What the engine is deciding of the request `reply` answers: every request the judge's engine takes is one of decide()'s. */
const decidingOf = (reply: FastifyReply): Deciding => (reply.raw as Decision).deciding

// What a request past the judged size leaves to judge: not what depends on whether it was valid.
const ANSWER_ONLY: ReadonlySet<CheckName> = new Set(['positive_data_acceptance', 'negative_data_rejection', 'ignored_auth'])

// A request without the credentials its operation requires: the client's fault like any other, and to
// the answer's checks the verifier's request without them (ignored_auth, where the service takes it).
const MISSING_CREDENTIALS = new MissingCredentialsError('').code
const METHOD_NOT_ALLOWED = new MethodNotAllowedError('', '', '').code
// What the engine refuses for bounds of its own, not the document's (http/json-body.ts, and numbers
// it cannot hold exactly): named as the request's fault, but a service that takes it breaks
// nothing the document says.
const OWN_BOUNDS: ReadonlySet<string> = new Set([new DuplicateKeyError().code, new TooDeepError(0).code, new ForbiddenKeyError('').code, new InexactNumberError('').code])
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

// A request's preconditions of HTTP's own (RFC 9110 §13.1), which a browser's cache adds: 304 and 412 answer them.
const PRECONDITIONS = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since']

const DECODERS: Record<string, typeof gunzipSync> = { gzip: gunzipSync, 'x-gzip': gunzipSync, deflate: inflateSync, br: brotliDecompressSync }

/** The judge of exchanges with `document` (read as 3.1), by the checks in `enabled`; bodies up to `http.bodyLimit`. */
export async function exchangeJudge ({ http, document, file, enabled }: { http: HttpConfig, document: OpenApiDocument, file: string, enabled: ReadonlySet<CheckName> }): Promise<ExchangeJudge> {
  const validators = createValidators(document, file)
  const { app, routes, refused, errorWriter } = await engine({
    // No shedding, no CORS: the engine answers nobody but the judge.
    http: { ...http, maxEventLoopDelay: 0, corsOrigins: [] },
    document,
    validators,
    file,
    setUp: async (app, served) => {
      // The body as the proxy kept it: the request's own has passed on to the upstream.
      app.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (err: null, payload: RequestPayload) => void) => {
        const { body } = decidingOf(reply)
        if (body === undefined) return done(null, payload)
        const given = new PassThrough().end(body)
        // Read so by Fastify's parsers, and by the engine's where Fastify's leave it unread (multipart, a GET's body).
        giveBody(request.raw, given)
        done(null, given)
      })
      // After every check of the operation: the request is one the document allows.
      app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply) => {
        decidingOf(reply).decided.route = request.routeOptions.config.openapi!.route
        reply.code(204).send()
      })
      app.addHook('onError', (request: FastifyRequest, reply: FastifyReply, error: Error & { code?: string }, done: HookHandlerDoneFunction) => {
        decidingOf(reply).decided = { route: request.routeOptions.config.openapi?.route, reason: error.message, code: error.code ?? '', url: request.routeOptions.url }
        done()
      })
      return Object.fromEntries(served.map((route) => [route.operationId, unreachable]))
    }
  })
  // Each operation's judge, made when first needed; keyed by its pointer, the one of its answers alone.
  const judges = new Map<RouteSpec | string, Judge>()

  /**
   * The engine's decision on the request as the proxy received it, routed by `url` as the client
   * sent it (under a server's base path or not: the engine takes both), with `body` in place of
   * its own (none where it was not kept: its operation is decided all the same); its answer goes
   * nowhere.
   */
  const decide = async (incoming: IncomingMessage, url: string, body: Buffer | undefined): Promise<Decided> => await new Promise((resolve) => {
    incoming.url = url
    const read = carriesBody(incoming.headers) || incoming.headers['content-type'] !== undefined
    app.routing(incoming, new Decision(incoming, { ...(read && { body: body ?? Buffer.alloc(0) }), decided: {}, done: resolve }))
  })

  return {
    routes,
    refused,
    errorWriter,
    async judge ({ method, url, headers, incoming, body, cutOff, answer }, failure) {
      const notes: string[] = []
      // Without its body (past the judged size, or cut off), the request is routed without it, and its answer judged but for what depends on the request's being valid.
      const whole = body !== undefined
      if (!whole) notes.push(cutOff === true ? 'a request body its client stopped sending once answered: the request passed on unjudged' : `a request body of over ${http.bodyLimit} bytes: the request passed on unjudged`)
      const decided = await decide(incoming, url, body)
      const { route } = decided
      if (route === undefined) return undeclaredMethod(decided, answer, method === 'HEAD', failure)
      const reason = whole ? decided.reason : undefined
      let fault = reason === undefined ? undefined : decided.code === MISSING_CREDENTIALS ? 'no credentials' : reason
      const violations: Violation[] = []
      if (reason !== undefined && enabled.has('request_conformance')) {
        violations.push({ check: 'request_conformance', status: answer.status, detail: `the request breaks the document (${decided.status}): ${reason}` })
      }
      if (failure !== undefined) return { route, violations, notes: [...notes, `answered ${answer.status} by the proxy: ${failure}`] }
      // The engine checks credentials for presence and form only: a 401 or 403 to a request that
      // carries them is the service's word on them (a token expired, another's key), declared or not.
      if (fault === undefined && (answer.status === 401 || answer.status === 403) && route.security.some((requirement) => Object.keys(requirement).length > 0)) {
        fault = 'credentials the service refused, which the proxy cannot check'
        notes.push(`answered ${answer.status} to credentials the proxy cannot check: its status not judged`)
      }
      // Whether the service took it, judged only where the document says what it must take.
      const ownBound = fault !== undefined && OWN_BOUNDS.has(String(decided.code))
      if (ownBound) notes.push(`a request the engine refuses for a bound of its own, not the document's (${fault}): whether the service took it is not judged`)
      // RFC 8259 (8.1): no sender adds a byte order mark to JSON, and a receiver may take or refuse one.
      const marked = whole && fault === undefined && body.subarray(0, 3).equals(BOM) && /\bjson\b/i.test(String(headers['content-type']))
      if (marked) notes.push('a JSON body that begins with a byte order mark, which RFC 8259 (8.1) lets a service take or refuse: whether it took it is not judged')
      const conditional = PRECONDITIONS.some((name) => headers[name] !== undefined)
      violations.push(...answered(route, { source: 'traffic', fault, conditional, upgrade: headers.upgrade !== undefined }, answer, method === 'HEAD', notes, whole && !ownBound && !marked ? undefined : ANSWER_ONLY))
      return { route, violations, notes }
    }
  }

  /**
   * A request of a method its path does not declare (the engine's 405), judged under the path's
   * first operation, as the verifier sends one (unsupported_method): the client's fault, and the
   * service's answer to it. Any other request no operation takes is none of the document's.
   */
  function undeclaredMethod (decided: Decided, answer: Exchange['answer'], head: boolean, failure?: string): Verdict {
    const first = decided.code === METHOD_NOT_ALLOWED ? routes.find((route) => route.url === decided.url) : undefined
    if (first === undefined) return { violations: [], notes: [] }
    const violations: Violation[] = enabled.has('request_conformance') ? [{ check: 'request_conformance', status: answer.status, detail: `the request breaks the document (${decided.status}): ${decided.reason}` }] : []
    if (failure !== undefined) return { route: first, violations, notes: [`answered ${answer.status} by the proxy: ${failure}`] }
    const notes: string[] = []
    violations.push(...answered(first, { source: 'traffic', fault: 'undeclared method' }, answer, head, notes))
    return { route: first, violations, notes }
  }

  /** The answer's violations, by the checks `except` leaves; what cannot be judged of it, in `notes`. A HEAD's answer has no body to judge, its operation declared for HEAD or a GET's (the engine routes a HEAD to its path's GET). */
  function answered (route: RouteSpec, sent: Sent, answer: Exchange['answer'], head: boolean, notes: string[], except?: ReadonlySet<CheckName>): Violation[] {
    const key = except === undefined ? route : route.pointer
    let judgeOf = judges.get(key)
    if (judgeOf === undefined) judges.set(key, judgeOf = judge(document, route, validators, except === undefined ? enabled : new Set([...enabled].filter((check) => !except.has(check)))))
    if (head) return judgeOf(sent, { status: answer.status, headers: flat(answer.headers) })
    const decoded = answer.body === undefined ? undefined : decodedBody(answer.headers['content-encoding'], answer.body, http.bodyLimit)
    if (answer.body === undefined) notes.push(`an answer of over ${http.bodyLimit} bytes: its body passed on unjudged`)
    else if (typeof decoded === 'string') notes.push(decoded)
    return judgeOf(sent, { status: answer.status, headers: flat(answer.headers), body: typeof decoded === 'string' ? undefined : decoded })
  }
}

// The engine's handlers are never reached: every request it allows is answered in preHandler.
async function unreachable (): Promise<never> {
  throw new Error('unreachable: the judge answers in preHandler')
}

const flat = (headers: IncomingHttpHeaders): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]))

/** The body as its Content-Encoding says, at most `limit` bytes of it; else why it cannot be judged. */
function decodedBody (encoding: string | undefined, body: Buffer, limit: number): Buffer | string {
  const codings = (encoding ?? '').split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity')
  try {
    // Codings are listed in the order applied: undone last first.
    return codings.reduceRight((bytes, coding) => {
      const decode = DECODERS[coding]
      if (decode === undefined) throw new Error(`an answer in the ${coding} coding, which the proxy does not read: its body passed on unjudged`)
      return decode(bytes, { maxOutputLength: limit })
    }, body)
  } catch (err) {
    return (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? `an answer of over ${limit} bytes decoded: its body passed on unjudged` : (err as Error).message.startsWith('an answer') ? (err as Error).message : `an answer whose ${encoding} body does not decode: passed on unjudged`
  }
}
