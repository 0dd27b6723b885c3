import bearerAuth from '@fastify/bearer-auth'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify'
import { InsufficientScopeError, KeysUnavailableError, UnauthorizedError } from '../errors.js'
import type { JwtOutcome, JwtVerdict, JwtVerifier } from './jwt.js'
import type { Limits } from './rate-limit.js'
import type { TokenSet } from './tokens.js'

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

export interface BearerOptions {
  limits?: Limits
  /** Access tokens from the identity provider, when JWT_ISSUER is set. */
  jwt?: JwtVerifier
  observer?: JwtGuardObserver
}

const BEARER = /^bearer(?:\s|$)/i
const CHALLENGE = 'Bearer realm="plants"'
const REJECTED = `${CHALLENGE}, error="invalid_token"`
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
export async function bearerGuard (app: FastifyInstance, tokens: TokenSet, { limits, jwt, observer }: BearerOptions = {}): Promise<(scopes: string[]) => onRequestHookHandler> {
  app.decorateRequest('credential', null)
  // bearer-auth only hears true or false: why a JWT was refused waits here for the guard.
  const refusals = new WeakMap<FastifyRequest, JwtVerdict>()
  const judged = (verdict: JwtVerdict, request: FastifyRequest): boolean => {
    if (verdict.outcome === 'accepted') {
      const { issuer, subject, scopes } = verdict.principal
      request.credential = { kind: 'jwt', identity: `jwt ${issuer} ${subject}`, principal: subject, scopes }
      return true
    }
    observer?.(verdict.outcome)
    refusals.set(request, verdict)
    return false
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

  const admit = limits === undefined
    ? (_request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => done()
    : (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => { limits.byToken(request, reply).then(() => done(), done) }
  const refuse = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, challenge: string, error: Error): void => {
    const answer = (): void => {
      if (challenge !== '') reply.header('www-authenticate', challenge)
      done(error)
    }
    if (limits === undefined) answer()
    else limits.byAddress(request, reply).then(answer, done)
  }
  const refused = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const verdict = refusals.get(request)
    if (verdict?.outcome === 'unavailable') {
      reply.header('retry-after', String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))))
      return refuse(request, reply, done, '', new KeysUnavailableError())
    }
    refuse(request, reply, done, REJECTED, new UnauthorizedError((verdict && MESSAGES[verdict.outcome]) ?? 'Invalid bearer token'))
  }

  return (scopes) => {
    const scope = scopes.join(' ')
    const insufficient = `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`
    // A JWT must grant every scope the requirement lists; a static key is trusted for all of them.
    const allowed = scopes.length === 0
      ? (_credential: Credential) => true
      : (credential: Credential) => credential.kind === 'static' || scopes.every((s) => credential.scopes.has(s))
    return function guard (request, reply, done) {
      const header = request.headers.authorization
      // No bearer credentials at all: RFC 6750 wants the bare challenge, with no error code.
      if (header === undefined) return refuse(request, reply, done, CHALLENGE, new UnauthorizedError('Missing bearer token'))
      if (!BEARER.test(header)) return refuse(request, reply, done, CHALLENGE, new UnauthorizedError('Authorization must use the Bearer scheme'))
      verify(request, reply, (err?: Error) => {
        if (err !== undefined) return refused(request, reply, done)
        const credential = request.credential!
        if (!allowed(credential)) {
          observer?.('insufficient_scope')
          return admit(request, reply, (limited?: Error) => {
            if (limited === undefined) reply.header('www-authenticate', insufficient)
            done(limited ?? new InsufficientScopeError(scope))
          })
        }
        if (credential.kind === 'jwt') observer?.('accepted')
        admit(request, reply, done)
      })
    }
  }
}
