import bearerAuth from '@fastify/bearer-auth'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify'
import { InsufficientScopeError, KeysUnavailableError, MissingCredentialsError, UnauthorizedError } from '../errors.ts'
import type { JwtOutcome, JwtVerdict, JwtVerifier } from './jwt.ts'
import type { Limit, Limits } from './rate-limit.ts'
import type { TokenSet } from './tokens.ts'

/** Who passed the bearer guard: a static key, trusted for every operation, or a provider's JWT. */
export type Credential =
  | { kind: 'static', identity: string, principal: string }
  | { kind: 'jwt', identity: string, principal: string, scopes: ReadonlySet<string> }

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who the request passed the bearer guard as; null before, or when refused. `identity` is what
     * rate limits count (a static key's hash; a JWT's issuer and subject, the same across its
     * reissued tokens), `principal` what the access line names (never a token).
     */
    credential: Credential | null
  }
}

/** What the guard tells of each JWT it judged, scopes included: what the metrics count. */
export type JwtGuardObserver = (outcome: JwtOutcome | 'insufficient_scope') => void

/** The guard's verdict on a request: what a trace shows, beside the kind of token (never the token). */
export type GuardOutcome = JwtOutcome | 'missing' | 'not_bearer' | 'invalid' | 'insufficient_scope' | 'rate_limited'
/** static or jwt: a token that passed as one, or a JWT refused; unknown: neither; none: no bearer token. */
export type TokenKind = 'static' | 'jwt' | 'unknown' | 'none'

/** Traces each guard (ops/trace-spans.ts): `start` is told of a request, and returns what marks its end. */
export interface GuardTracer {
  start: (request: FastifyRequest) => GuardSpan
}

/** Marks a guard's end, with its verdict. */
export type GuardSpan = (outcome: GuardOutcome, kind: TokenKind) => void

export interface BearerOptions {
  limits?: Limits
  /** Access tokens from the identity provider, when JWT_ISSUER is set. */
  jwt?: JwtVerifier
  observer?: JwtGuardObserver
  tracer?: GuardTracer
}

const BEARER = /^bearer(?:\s|$)/i
const CHALLENGE = 'Bearer realm="plants"'
const CHALLENGED = { 'www-authenticate': CHALLENGE }
const REJECTED = { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` }
// What a refused JWT is told: enough to act on (renew, wait), nothing about the checks' insides.
const MESSAGES: Partial<Record<JwtOutcome, string>> = {
  expired: 'The bearer token has expired',
  not_yet_valid: 'The bearer token is not valid yet'
}

/**
 * Registers @fastify/bearer-auth in the caller's scope and returns a factory of guards: one per
 * security requirement, with the scopes it lists. bearer-auth parses the header, reading the
 * scheme word case-insensitively in rfc6749 mode (RFC 7235); its `auth` decides: a static key
 * (the token set compares in constant time, and can be replaced while running), or else, with
 * JWT_ISSUER set, a provider's access token. We answer as RFC 6750 says, in the contract's Error
 * shape: 401 with the challenge, 403 when a JWT lacks a scope, and 503 with Retry-After when the
 * provider's keys cannot be had (the token may be good). With rate limits, a request is counted
 * once judged: under its credential's identity when it passed, under its client's address when not.
 */
export async function bearerGuard (app: FastifyInstance, tokens: TokenSet, { limits, jwt, observer, tracer }: BearerOptions = {}): Promise<(scopes: string[]) => onRequestHookHandler> {
  app.decorateRequest('credential', null)
  // bearer-auth only hears true or false: why a JWT was refused waits here for the guard.
  const refusals = new WeakMap<FastifyRequest, JwtVerdict>()
  const judged = (verdict: JwtVerdict, request: FastifyRequest): boolean => {
    if (verdict.outcome !== 'accepted') {
      refusals.set(request, verdict)
      return false
    }
    const { issuer, subject, scopes } = verdict.principal
    request.credential = { kind: 'jwt', identity: `jwt ${issuer} ${subject}`, principal: subject, scopes }
    return true
  }
  const auth = (token: string, request: FastifyRequest): boolean | Promise<boolean> => {
    const identity = tokens.identify(token)
    if (identity !== undefined) {
      request.credential = { kind: 'static', identity, principal: `key:${identity.slice(0, 12)}` }
      return true
    }
    if (jwt === undefined) return false
    const verdict = jwt.verify(token)
    return verdict instanceof Promise ? verdict.then((v) => judged(v, request)) : judged(verdict, request)
  }
  await app.register(bearerAuth, { keys: [], auth, addHook: false, specCompliance: 'rfc6749', verifyErrorLogLevel: 'debug' })
  const verify = app.verifyBearerAuth!

  /** Goes on, or answers `error` with `headers`; the guard's span ends with the verdict. */
  const answer = (reply: FastifyReply, done: HookHandlerDoneFunction, traced: GuardSpan | undefined, outcome: GuardOutcome, kind: TokenKind, error?: Error, headers?: Record<string, string>): void => {
    if (headers !== undefined) reply.headers(headers)
    traced?.(outcome, kind)
    done(error)
  }
  /**
   * The verdict on a request: the metrics count a JWT's; then the request is counted as
   * RATE_LIMIT_PER_MINUTE says, and answered, or past the limit, answered the 429. Functions of
   * the guard's, taking the request's parts as arguments: a request makes no closure of its own
   * (but bearer-auth's callback) on the way.
   */
  const conclude = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, traced: GuardSpan | undefined, limit: Limit | undefined, outcome: Exclude<GuardOutcome, 'rate_limited'>, kind: TokenKind, error?: Error, headers?: Record<string, string>): void => {
    if (kind === 'jwt') observer?.(outcome as JwtOutcome | 'insufficient_scope')
    if (limit === undefined) return answer(reply, done, traced, outcome, kind, error, headers)
    limit(request, reply).then(
      () => answer(reply, done, traced, outcome, kind, error, headers),
      (limited: Error) => answer(reply, done, traced, 'rate_limited', kind, limited))
  }

  return (scopes) => {
    const scope = scopes.join(' ')
    const insufficient = { 'www-authenticate': `${CHALLENGE}, error="insufficient_scope", scope="${scope}"` }
    // A JWT must grant every scope the requirement lists; a static key is trusted for all of them.
    const allowed = scopes.length === 0
      ? (_credential: Credential) => true
      : (credential: Credential) => credential.kind === 'static' || scopes.every((s) => credential.scopes.has(s))

    return function guard (request, reply, done) {
      const traced = tracer?.start(request)
      const header = request.headers.authorization
      // No bearer credentials at all: RFC 6750 wants the bare challenge, with no error code.
      if (header === undefined) return conclude(request, reply, done, traced, limits?.byAddress, 'missing', 'none', new MissingCredentialsError('Missing bearer token'), CHALLENGED)
      if (!BEARER.test(header)) return conclude(request, reply, done, traced, limits?.byAddress, 'not_bearer', 'none', new MissingCredentialsError('Authorization must use the Bearer scheme'), CHALLENGED)
      verify(request, reply, (err?: Error) => {
        if (err !== undefined) {
          const verdict = refusals.get(request)
          if (verdict === undefined) return conclude(request, reply, done, traced, limits?.byAddress, 'invalid', 'unknown', new UnauthorizedError('Invalid bearer token'), REJECTED)
          if (verdict.outcome === 'unavailable') {
            return conclude(request, reply, done, traced, limits?.byAddress, 'unavailable', 'jwt', new KeysUnavailableError(), { 'retry-after': String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))) })
          }
          return conclude(request, reply, done, traced, limits?.byAddress, verdict.outcome, 'jwt', new UnauthorizedError(MESSAGES[verdict.outcome] ?? 'Invalid bearer token'), REJECTED)
        }
        const credential = request.credential!
        if (!allowed(credential)) return conclude(request, reply, done, traced, limits?.byToken, 'insufficient_scope', 'jwt', new InsufficientScopeError(scope), insufficient)
        conclude(request, reply, done, traced, limits?.byToken, 'accepted', credential.kind)
      })
    }
  }
}
