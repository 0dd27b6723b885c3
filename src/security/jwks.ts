import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose'
import type { FastifyBaseLogger } from 'fastify'
import type { JwtConfig } from './config.ts'
import { isHttpsOrLoopback } from '../http/host.ts'
import { withDeadline } from '../store/deadline.ts'

// The identity provider's signing keys, from its JWKS only: jose's remote key set fetches it
// (bounded by the timeout, one fetch shared by concurrent requests, symmetric keys refused) and
// caches it; a token whose `kid` it does not hold makes it fetch again at most once per cooldown.
// What jose leaves to us, here: finding the JWKS by OIDC discovery, with the issuer it names checked
// (RFC 8414 §3.3); keeping the last key set to verify with while the provider cannot be reached; at
// most one fetch per cooldown after a failed one; and a deadline on every request's wait.

/** Told of each fetch from the provider: what the metrics count. */
export interface KeySetObserver {
  fetched: (document: 'discovery' | 'jwks', ok: boolean) => void
}

/** The keys cannot be had now, so the token cannot be judged: it may be good, so retry, not 401. */
export class KeysUnavailable extends Error {
  override name = 'KeysUnavailable'
  readonly retryAfterMs: number
  constructor (retryAfterMs: number, options?: ErrorOptions) {
    super('the identity provider\'s keys cannot be fetched', options)
    this.retryAfterMs = retryAfterMs
  }
}

/** The provider's discovery document contradicts the configuration: never trust its keys. */
export class DiscoveryMismatch extends Error {
  override name = 'DiscoveryMismatch'
}

export interface KeySet {
  /** For jose's jwtVerify: the key a token's header names. */
  getKey: JWTVerifyGetKey
  /** Discovery and a first fetch, at boot: a provider that cannot be reached is retried later; a mismatch throws. */
  start: () => Promise<void>
  /** Calls `listener` whenever a fetch brings a key set other than the last one. */
  onChange: (listener: () => void) => void
}

export interface KeySetOptions {
  observer?: KeySetObserver
  log: FastifyBaseLogger
}

/** A fetch failed, as opposed to a token naming a key the set does not hold. */
function fetchFailed (err: unknown): boolean {
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError) || err.code === 'ERR_JOSE_GENERIC'
}

export function keySet (config: JwtConfig, { observer, log }: KeySetOptions): KeySet {
  let remote: Promise<JWTVerifyGetKey> | undefined
  // The last key set a fetch brought, to verify with while the provider cannot be reached.
  let last: { text: string, getKey: JWTVerifyGetKey } | undefined
  // After a failed fetch, none other before this.
  let retryAt = 0
  const listeners: Array<() => void> = []

  const fetchJwks: typeof fetch = async (url, init) => {
    let response: Response
    try {
      response = await fetch(url, init)
    } catch (err) {
      observer?.fetched('jwks', false)
      throw err
    }
    observer?.fetched('jwks', response.status === 200)
    if (response.status === 200) remember(await response.clone().text())
    return response
  }

  const remember = (text: string): void => {
    if (text === last?.text) return
    let getKey: JWTVerifyGetKey
    try {
      getKey = createLocalJWKSet(JSON.parse(text))
    } catch {
      return // jose refuses the same set, and says so
    }
    const changed = last !== undefined
    last = { text, getKey }
    if (changed) for (const listener of listeners) listener()
  }

  /** The JWKS URL: configured, or named by the issuer's discovery document, which must name the issuer. */
  const discover = async (): Promise<URL> => {
    if (config.jwksUrl !== undefined) return new URL(config.jwksUrl)
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
    let metadata: { issuer?: unknown, jwks_uri?: unknown }
    try {
      const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(config.timeoutMs), headers: { accept: 'application/json' } })
      if (response.status !== 200) throw new Error(`it answered ${response.status}`)
      metadata = await response.json() as typeof metadata
    } catch (err) {
      observer?.fetched('discovery', false)
      throw new KeysUnavailable(config.cooldownMs, { cause: err })
    }
    observer?.fetched('discovery', true)
    if (metadata.issuer !== config.issuer) {
      throw new DiscoveryMismatch(`the discovery document at ${url} names the issuer ${JSON.stringify(metadata.issuer)}, not JWT_ISSUER's "${config.issuer}" (RFC 8414 §3.3): its keys are not trusted`)
    }
    if (typeof metadata.jwks_uri !== 'string' || !isHttpsOrLoopback(metadata.jwks_uri)) {
      throw new DiscoveryMismatch(`the discovery document at ${url} names no https:// jwks_uri (got ${JSON.stringify(metadata.jwks_uri)})`)
    }
    return new URL(metadata.jwks_uri)
  }

  const remoteSet = async (): Promise<JWTVerifyGetKey> => {
    remote ??= discover().then((url) => createRemoteJWKSet(url, {
      timeoutDuration: config.timeoutMs,
      cooldownDuration: config.cooldownMs,
      cacheMaxAge: config.maxAgeMs,
      [customFetch]: fetchJwks
    }), (err) => {
      remote = undefined
      retryAt = Date.now() + config.cooldownMs
      if (err instanceof DiscoveryMismatch) log.error({ problem: err.message }, 'JWT discovery refused')
      throw err instanceof DiscoveryMismatch ? new KeysUnavailable(config.cooldownMs, { cause: err }) : err
    })
    return await remote
  }

  /** The last key set fetched, while the provider cannot give one; a key it does not hold cannot be had. */
  const fromLast: JWTVerifyGetKey = async (header, token) => {
    const wait = Math.max(retryAt - Date.now(), 0)
    if (last === undefined) throw new KeysUnavailable(wait)
    try {
      return await last.getKey(header, token)
    } catch (err) {
      throw err instanceof errors.JWKSNoMatchingKey ? new KeysUnavailable(wait, { cause: err }) : err
    }
  }

  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (Date.now() < retryAt) return await fromLast(header, token)
    try {
      return await withDeadline(remoteSet().then(async (set) => await set(header, token)), config.timeoutMs, () => new KeysUnavailable(config.timeoutMs))
    } catch (err) {
      if (!(err instanceof KeysUnavailable) && !fetchFailed(err)) throw err
      retryAt = Date.now() + config.cooldownMs
      log.warn({ problem: (err as Error).message }, 'the identity provider\'s keys cannot be fetched; using the last ones')
      return await fromLast(header, token)
    }
  }

  return {
    getKey,
    onChange: (listener) => { listeners.push(listener) },
    async start () {
      try {
        const set = await remoteSet() as JWTVerifyGetKey & { reload: () => Promise<void> }
        await set.reload()
      } catch (err) {
        const cause = (err as Error).cause
        if (cause instanceof DiscoveryMismatch) throw cause
        retryAt = Date.now() + config.cooldownMs
        log.warn({ problem: (err as Error).message }, 'the identity provider cannot be reached; JWTs answer 503 until it can, static keys work')
      }
    }
  }
}
