import { errors, jwtVerify, type JWTPayload } from 'jose'
import type { FastifyBaseLogger } from 'fastify'
import type { JwtConfig } from './config.ts'
import { keySet, KeysUnavailable, type KeySetObserver } from './jwks.ts'
import { TokenCache } from './token-cache.ts'

// Access tokens from the identity provider (RFC 9068, checked as RFC 8725 advises), with jose:
// - the size first, before anything is parsed;
// - the signature, with a key from the provider's JWKS only (jwks.ts), never one a token's header
//   names or carries (`jwk`, `jku`, `x5u`), by an algorithm from JWT_ALGORITHMS only (asymmetric;
//   `none` and HS* are refused at boot), whatever the header says;
// - `typ` (JWT_TYP, by default at+jwt, so an ID token is no access token), `iss` exactly, `aud`
//   among JWT_AUDIENCE, `exp`, `nbf` and `iat` (not in the future, not older than JWT_MAX_AGE_S),
//   with JWT_CLOCK_TOLERANCE_S; `exp`, `iat` and `sub` must be there.
// A verified token is remembered (token-cache.ts). This module, and jose, load only when
// JWT_ISSUER is set.

/** Why a token was accepted or refused: the metrics' outcome label. */
export type JwtOutcome = 'accepted' | 'oversize' | 'malformed' | 'disallowed_algorithm' | 'unknown_key' | 'bad_signature' | 'expired' | 'not_yet_valid' | 'bad_claims' | 'unavailable'

export interface JwtPrincipal {
  issuer: string
  subject: string
  /** The scopes the token grants. */
  scopes: ReadonlySet<string>
}

export type JwtVerdict =
  | { outcome: 'accepted', principal: JwtPrincipal }
  | { outcome: Exclude<JwtOutcome, 'accepted' | 'unavailable'> }
  | { outcome: 'unavailable', retryAfterMs: number }

export interface JwtVerifier {
  /** A remembered token is judged at once; any other once its signature and claims are checked. */
  verify: (token: string) => JwtVerdict | Promise<JwtVerdict>
}

export interface JwtOptions {
  log: FastifyBaseLogger
  observer?: KeySetObserver
}

/** The scopes a token grants: in the configured claim, or else in `scope` (space-delimited) or `scp` (string or array). */
function scopesOf (payload: JWTPayload, claim: string | undefined): Set<string> {
  const scopes = new Set<string>()
  for (const name of claim === undefined ? ['scope', 'scp'] : [claim]) {
    const value = payload[name]
    const items = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : []
    for (const item of items) if (typeof item === 'string' && item !== '') scopes.add(item)
  }
  return scopes
}

/** A refusal from jose, as the outcome it means. */
function outcomeOf (err: unknown): Exclude<JwtOutcome, 'accepted' | 'oversize' | 'unavailable'> {
  if (err instanceof errors.JWTExpired) return 'expired'
  if (err instanceof errors.JWTClaimValidationFailed) return err.claim === 'nbf' ? 'not_yet_valid' : 'bad_claims'
  if (err instanceof errors.JOSEAlgNotAllowed) return 'disallowed_algorithm'
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature'
  if (err instanceof errors.JWKSNoMatchingKey) return 'unknown_key'
  return 'malformed'
}

export async function createJwtVerifier (config: JwtConfig, { log, observer }: JwtOptions): Promise<JwtVerifier> {
  const keys = keySet(config, { log, observer })
  const cache = new TokenCache<JwtPrincipal>()
  // A new key set may drop a key: no token verified with the old set is trusted from memory.
  keys.onChange(() => cache.clear())
  await keys.start()
  const options = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: config.algorithms,
    typ: config.typ,
    clockTolerance: config.clockToleranceS,
    maxTokenAge: config.maxAgeS,
    requiredClaims: ['exp', 'sub']
  }

  /** The signature and claims, checked; a success remembered under `key`. */
  const check = async (token: string, key: string): Promise<JwtVerdict> => {
    try {
      const { payload } = await jwtVerify(token, keys.getKey, options)
      const principal = { issuer: payload.iss!, subject: payload.sub!, scopes: scopesOf(payload, config.scopeClaim) }
      cache.set(key, principal, payload.exp!)
      return { outcome: 'accepted', principal }
    } catch (err) {
      if (err instanceof KeysUnavailable) return { outcome: 'unavailable', retryAfterMs: err.retryAfterMs }
      if (!(err instanceof errors.JOSEError)) log.warn({ err }, 'a JWT check failed unexpectedly; refused')
      return { outcome: outcomeOf(err) }
    }
  }

  return {
    verify (token) {
      if (token.length > config.maxTokenBytes) return { outcome: 'oversize' }
      const key = TokenCache.key(token)
      const cached = cache.get(key)
      return cached === undefined ? check(token, key) : { outcome: 'accepted', principal: cached }
    }
  }
}
