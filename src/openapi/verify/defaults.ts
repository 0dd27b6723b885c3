// The verifier's bounds when none is given: what npm run verify's usage states, and what
// verifier.ts holds a run to.
export const DEFAULTS = { generated: 3, maxRequests: 100_000, timeLimitMs: 15 * 60_000, concurrency: 8, shrinkRequests: 40, retries429: 3, maxRetryAfterMs: 30_000, requestTimeoutMs: 10_000 }
