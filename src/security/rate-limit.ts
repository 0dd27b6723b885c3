import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SecurityConfig } from './config.ts'
import type { NamedCount, SharedCountObserver } from './shared-rate-limit.ts'
import { RateLimitedError } from '../errors.ts'

// Per-token rate limits (@fastify/rate-limit), counted by each instance in its own memory, or
// with RATE_LIMIT_REDIS_URL by every instance together in Redis (shared-rate-limit.ts). The
// bearer guard (auth.ts) applies them once it has judged the token: a request whose token passed
// counts against its credential's identity (a static key's hash, never the key itself; a JWT's
// issuer and subject, so that a client's reissued tokens share one count); one it refused counts
// against the client's address (as Fastify sees it: behind TRUST_PROXY, the proxy's client), in
// a store of its own, so bad tokens can neither spend nor evict a good token's count. Past the
// limit: 429 with Retry-After. Every counted answer carries RateLimit-Limit, -Remaining and -Reset.

/** Resolves when the request may go on; rejects with the 429 when it may not. */
export type Limit = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

export interface Limits {
  /** Counts a request under the identity of the credential it passed with. */
  byToken: Limit
  /** Counts a request whose token was refused, under its client's address. */
  byAddress: Limit
}

/**
 * Registers the limits in the caller's scope; undefined when RATE_LIMIT_PER_MINUTE is unset.
 * `observe` is told whether the count is shared, with Redis.
 */
export async function rateLimits (app: FastifyInstance, { rateLimit: limit }: Pick<SecurityConfig, 'rateLimit'>, observe?: SharedCountObserver): Promise<Limits | undefined> {
  if (limit === undefined) return undefined
  // Loaded only when limits are on; Redis's client only when they are shared.
  const { default: rateLimit } = await import('@fastify/rate-limit')
  const shared = limit.redis === undefined ? undefined : (await import('./shared-rate-limit.ts')).sharedRateLimit(limit.redis, app.log, observe)
  if (shared !== undefined) app.addHook('onClose', shared.close)
  await app.register(rateLimit, {
    global: false,
    max: limit.max,
    timeWindow: limit.windowMs,
    enableDraftSpec: true,
    ...(shared && { store: shared.Store }),
    errorResponseBuilder: (_request, { after }) => new RateLimitedError(after)
  })
  // Each app.rateLimit() counts in a store of its own (in Redis, under keys named by its count).
  // Its default key is the client's address.
  type Options = NonNullable<Parameters<typeof app.rateLimit>[0]>
  const counted = (count: NamedCount['count'], options: Options = {}): Options => ({ ...options, count }) as Options
  return {
    byToken: app.rateLimit(counted('token', { keyGenerator: (request) => request.credential!.identity })),
    byAddress: app.rateLimit(counted('address'))
  }
}
