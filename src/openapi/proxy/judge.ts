import type { IncomingHttpHeaders } from 'node:http'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { DuplicateKeyError, ForbiddenKeyError, MissingCredentialsError, TooDeepError } from '../../errors.ts'
import type { HttpConfig } from '../../http/config.ts'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { engine } from '../routes/engine.ts'
import { SENDERS_OWN } from './proxy.ts'
import type { Refusal, RouteSpec } from '../routes/routes.ts'
import { createValidators } from '../schemas/validation.ts'
import { judge, type CheckName, type Judge, type Violation } from '../verify/checks.ts'

// What the proxy decides of one exchange of live traffic, by the engine the mock and the service
// run on and the verifier's checks. The request goes through the engine's own routes, parsing,
// validation and security (routes/engine.ts), whose handlers are never reached: what gets past
// every check is a request the document allows, what is refused names its fault in the engine's
// words. The answer is then judged as the verifier judges one (verify/checks.ts), knowing what
// the request was: a valid one refused, an invalid one or one without credentials accepted.

/** One request and its answer, as they passed; a body past the bound the proxy judges is left out. */
export interface Exchange {
  method: string
  /** The path and query, as the client sent them. */
  url: string
  headers: IncomingHttpHeaders
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

// Where the engine tells the judge what it decided, in its answer to the injected request.
const ROUTE = 'x-judged-route'
const REASON = 'x-judged-reason'
const CODE = 'x-judged-code'

// What a request past the judged size leaves to judge: not what depends on whether it was valid.
const ANSWER_ONLY: ReadonlySet<CheckName> = new Set(['positive_data_acceptance', 'negative_data_rejection', 'ignored_auth'])

// A request without the credentials its operation requires: sent so on purpose, no fault of the document's.
const MISSING_CREDENTIALS = new MissingCredentialsError('').code
// What the engine refuses for bounds of its own, not the document's (http/json-body.ts): named as
// the request's fault, but a service that takes it breaks nothing the document says.
const OWN_BOUNDS: ReadonlySet<string> = new Set([new DuplicateKeyError().code, new TooDeepError(0).code, new ForbiddenKeyError('').code])
const BOM = Buffer.from([0xef, 0xbb, 0xbf])

const DECODERS: Record<string, typeof gunzipSync> = { gzip: gunzipSync, 'x-gzip': gunzipSync, deflate: inflateSync, br: brotliDecompressSync }

/** The judge of exchanges with `document` (read as 3.1), by the checks in `enabled`; bodies up to `http.bodyLimit`. */
export async function exchangeJudge ({ http, document, file, enabled }: { http: HttpConfig, document: OpenApiDocument, file: string, enabled: ReadonlySet<CheckName> }): Promise<ExchangeJudge> {
  const validators = createValidators(document, file)
  let index = new Map<RouteSpec, number>()
  const { app, routes, refused, errorWriter } = await engine({
    // No shedding, no CORS: the engine answers nobody but the judge.
    http: { ...http, maxEventLoopDelay: 0, corsOrigins: [] },
    document,
    validators,
    file,
    setUp: async (app, served) => {
      index = new Map(served.map((route, i) => [route, i]))
      // After every check of the operation: the request is one the document allows.
      app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply) => {
        reply.code(204).header(ROUTE, String(index.get(request.routeOptions.config.openapi!.route))).send()
      })
      app.addHook('onError', (request: FastifyRequest, reply: FastifyReply, error: Error & { code?: string }, done: HookHandlerDoneFunction) => {
        const route = request.routeOptions.config.openapi?.route
        if (route !== undefined) reply.header(ROUTE, String(index.get(route)))
        reply.header(REASON, encodeURIComponent(error.message)).header(CODE, error.code ?? '')
        done()
      })
      return Object.fromEntries(served.map((route) => [route.operationId, unreachable]))
    }
  })
  // Each operation's judge, made when first needed; keyed by its pointer, the one of its answers alone.
  const judges = new Map<RouteSpec | string, Judge>()
  const toDocument = documentTarget(document)

  return {
    routes,
    refused,
    errorWriter,
    async judge ({ method, url: asSent, headers, body, cutOff, answer }, failure) {
      const url = toDocument(asSent)
      const notes: string[] = []
      // Without its body (past the judged size, or cut off), the request is routed without it, and its answer judged but for what depends on the request's being valid.
      const whole = body !== undefined
      if (!whole) notes.push(cutOff === true ? 'a request body its client stopped sending once answered: the request passed on unjudged' : `a request body of over ${http.bodyLimit} bytes: the request passed on unjudged`)
      const decided = await app.inject({ method: method as 'GET', url, headers: requestHeaders(headers, whole), ...(whole && { payload: body }) })
      const at = decided.headers[ROUTE]
      const route = at === undefined ? undefined : routes[Number(at)]
      if (route === undefined) return { violations: [], notes: [] }
      const reason = whole ? decided.headers[REASON] : undefined
      const fault = reason === undefined ? undefined : decided.headers[CODE] === MISSING_CREDENTIALS ? 'no credentials' : decodeURIComponent(String(reason))
      const violations: Violation[] = []
      if (fault !== undefined && fault !== 'no credentials' && enabled.has('request_conformance')) {
        violations.push({ check: 'request_conformance', status: answer.status, detail: `the request breaks the document (${decided.statusCode}): ${fault}` })
      }
      if (failure !== undefined) return { route, violations, notes: [...notes, `answered ${answer.status} by the proxy: ${failure}`] }
      // Whether the service took it, judged only where the document says what it must take.
      const ownBound = fault !== undefined && OWN_BOUNDS.has(String(decided.headers[CODE]))
      if (ownBound) notes.push(`a request the engine refuses for a bound of its own, not the document's (${fault}): whether the service took it is not judged`)
      // RFC 8259 (8.1): no sender adds a byte order mark to JSON, and a receiver may take or refuse one.
      const marked = whole && fault === undefined && body.subarray(0, 3).equals(BOM) && /\bjson\b/i.test(String(headers['content-type']))
      if (marked) notes.push('a JSON body that begins with a byte order mark, which RFC 8259 (8.1) lets a service take or refuse: whether it took it is not judged')
      violations.push(...answered(route, fault, answer, method === 'HEAD', notes, whole && !ownBound && !marked ? undefined : ANSWER_ONLY))
      return { route, violations, notes }
    }
  }

  /** The answer's violations, by the checks `except` leaves; what cannot be judged of it, in `notes`. A HEAD's answer has no body to judge, its operation declared for HEAD or a GET's (the engine routes a HEAD to its path's GET). */
  function answered (route: RouteSpec, fault: string | undefined, answer: Exchange['answer'], head: boolean, notes: string[], except?: ReadonlySet<CheckName>): Violation[] {
    const key = except === undefined ? route : route.pointer
    let judgeOf = judges.get(key)
    if (judgeOf === undefined) judges.set(key, judgeOf = judge(document, route, validators, except === undefined ? enabled : new Set([...enabled].filter((check) => !except.has(check)))))
    if (head) return judgeOf({ source: 'traffic', fault }, { status: answer.status, headers: flat(answer.headers) })
    const decoded = answer.body === undefined ? undefined : decodedBody(answer.headers['content-encoding'], answer.body, http.bodyLimit)
    if (answer.body === undefined) notes.push(`an answer of over ${http.bodyLimit} bytes: its body passed on unjudged`)
    else if (typeof decoded === 'string') notes.push(decoded)
    return judgeOf({ source: 'traffic', fault }, { status: answer.status, headers: flat(answer.headers), body: typeof decoded === 'string' ? undefined : decoded })
  }
}

/**
 * The base paths of the document's servers (`/v1` of `https://api.example.com/v1`, each variable at
 * its default), longest first; not one that some path of the document begins with, which is taken
 * as part of that path.
 */
export function basePaths (document: OpenApiDocument): string[] {
  const paths = Object.keys(document.paths ?? {})
  const servers: Array<{ url?: unknown, variables?: Record<string, { default?: unknown }> }> = Array.isArray(document.servers) ? document.servers : []
  return [...new Set(servers.flatMap((server): string[] => {
    // Each variable at its default, as the document's clients first see it.
    const url = String(server.url ?? '').replace(/\{([^}]*)\}/g, (_whole, name: string) => String(server.variables?.[name]?.default ?? ''))
    try {
      return [new URL(url, 'http://server').pathname.replace(/\/+$/, '')]
    } catch {
      return []
    }
  }))].filter((base) => base !== '' && !paths.some((path) => path === base || path.startsWith(`${base}/`)))
    .sort((a, b) => b.length - a.length)
}

/**
 * A request's target as the document's paths read it: a client that speaks to the proxy as to
 * one of the document's servers (as its HTTP proxy, or with the proxy in that server's place)
 * sends its paths under that server's base path (`/v1/pets/1`), which the document's paths leave out.
 */
function documentTarget (document: OpenApiDocument): (target: string) => string {
  const bases = basePaths(document)
  return (target) => {
    const base = bases.find((base) => target.startsWith(base) && /^([/?]|$)/.test(target.slice(base.length)))
    if (base === undefined) return target
    const rest = target.slice(base.length)
    return rest.startsWith('/') ? rest : `/${rest}`
  }
}

// The engine's handlers are never reached: every request it allows is answered in preHandler.
async function unreachable (): Promise<never> {
  throw new Error('unreachable: the judge answers in preHandler')
}

/** The headers the engine reads; without its body, none that speak of one. */
function requestHeaders (headers: IncomingHttpHeaders, withBody: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !SENDERS_OWN.has(name) && (withBody || !name.startsWith('content-'))) out[name] = value
  return out
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
