import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SecurityConfig } from './config.ts'
import { RateLimitedError } from '../errors.ts'

// Per-token rate limits (@fastify/rate-limit), counted by each instance in its own memory. The
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

/** Registers the limits in the caller's scope; undefined when RATE_LIMIT_PER_MINUTE is unset. */
export async function rateLimits (app: FastifyInstance, { rateLimit: limit }: Pick<SecurityConfig, 'rateLimit'>): Promise<Limits | undefined> {
  if (limit === undefined) return undefined
  // Loaded only when limits are on.
  const { default: rateLimit } = await import('@fastify/rate-limit')
  await app.register(rateLimit, {
    global: false,
    max: limit.max,
    timeWindow: limit.windowMs,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, { after }) => new RateLimitedError(after)
  })
  // Each app.rateLimit() counts in a store of its own. Its default key is the client's address.
  return {
    byToken: app.rateLimit({ keyGenerator: (request) => request.credential!.identity }),
    byAddress: app.rateLimit({})
  }
}
