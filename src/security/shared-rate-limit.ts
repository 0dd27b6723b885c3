import module from 'node:module'
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { Redis } from 'ioredis'
import type { RedisLimitConfig } from './config.ts'

// The rate limits counted in Redis (or Valkey), so that every replica behind a Service counts a
// token's requests together (RATE_LIMIT_REDIS_URL). Counting is @fastify/rate-limit's own Redis
// store (one Lua script a request: INCR, and the window's expiry with the first), over ioredis.
//
// Redis failing never fails the service. Every command is bounded (RATE_LIMIT_REDIS_TIMEOUT_MS),
// none waits in a queue for a connection (no offline queue, no retry of a command), and
// reconnections back off up to 2 s. The first command that fails or times out turns the count
// local: each replica then counts in its own memory (the plugin's in-memory store), at the same
// limit, never unlimited (so too from the start until Redis first answers); it says so once in
// the log and in the metric, and pings Redis every second (each ping bounded too), and at once
// on a new connection, until one answers, when the shared count takes over again.

// The plugin's stores, from its package: it exports neither. Left to Node (a bundle would copy them).
const requireStore = module.createRequire(import.meta.url)
type StoreOf = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => FastifyRateLimitStore
const RedisStore = requireStore('@fastify/rate-limit/store/RedisStore.js') as StoreOf
const LocalStore = requireStore('@fastify/rate-limit/store/LocalStore.js') as StoreOf

/** How often Redis is asked again while the count is local. */
const PROBE_MS = 1000
const MAX_RECONNECT_DELAY_MS = 2000

/** Told each time the count turns shared (Redis answers) or local (it does not). */
export type SharedCountObserver = (shared: boolean) => void

/** The option that names a count (its keys in Redis): each app.rateLimit() gives its own. */
export interface NamedCount { count: string }

/** What the plugin hands a store (its options merged with an app.rateLimit()'s): what ours reads. */
interface StoreOptions extends Partial<NamedCount> { continueExceeding?: boolean, exponentialBackoff?: boolean, cache?: number }

export interface SharedRateLimit {
  /** The store class @fastify/rate-limit takes (its `store` option). */
  Store: FastifyRateLimitStoreCtor
  close: () => Promise<void>
}

/** Connects to Redis (not waiting for it: until it answers, the count is local) and makes the store. */
export function sharedRateLimit ({ url, prefix, timeoutMs }: RedisLimitConfig, log: FastifyBaseLogger, observe: SharedCountObserver = () => {}): SharedRateLimit {
  const redis = new Redis(url, {
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1000),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(100 * 2 ** times, MAX_RECONNECT_DELAY_MS),
    // Redis's reply to the first command says whether it is ready: no separate INFO first.
    enableReadyCheck: false,
    // The counts asked for in one turn of the event loop go in one write, and come back in one read.
    enableAutoPipelining: true
  })
  // Unknown until Redis first answers or fails; counted locally until it answers.
  let shared: boolean | undefined
  let probe: NodeJS.Timeout | undefined
  let closed = false
  // Why the connection failed last (refused, TLS, a password): a command only says it could not be sent.
  let connection: string | undefined

  const turnShared = (): void => {
    if (shared === true || closed) return
    shared = true
    clearTimeout(probe)
    probe = undefined
    log.info('rate limits: counted in Redis, shared by every instance')
    observe(true)
  }
  const turnLocal = (err: Error): void => {
    if (closed) return
    if (shared !== false) {
      shared = false
      // The message only: an ioredis error may carry the command and its arguments (the token's identity).
      log.warn({ problem: err.message, ...(connection !== undefined && { connection }) }, 'rate limits: Redis does not answer; each instance counts on its own until it does')
      observe(false)
    }
    probe ??= setTimeout(ping, PROBE_MS)
  }
  const ping = (): void => {
    clearTimeout(probe)
    probe = undefined
    redis.ping().then(turnShared, turnLocal)
  }
  // A connection's errors are told with the commands' (without a listener, ioredis would throw them).
  redis.on('error', (err: Error) => { connection = err.message })
  // Local until Redis answers: asked as soon as a connection is made (at start, after a restart),
  // and every second meanwhile.
  observe(false)
  redis.on('ready', () => {
    connection = undefined
    ping()
  })
  probe = setTimeout(ping, PROBE_MS)

  class Store {
    readonly #redis: FastifyRateLimitStore
    readonly #local: FastifyRateLimitStore

    constructor (options: StoreOptions) {
      const { continueExceeding = false, exponentialBackoff = false } = options
      this.#redis = new RedisStore(continueExceeding, exponentialBackoff, redis, `${prefix}${options.count ?? 'requests'}:`)
      this.#local = new LocalStore(continueExceeding, exponentialBackoff, options.cache)
    }

    incr (key: string, done: (err: Error | null, result?: { current: number, ttl: number }) => void, timeWindow: number, max: number): void {
      if (shared !== true) return this.#local.incr(key, done, timeWindow, max)
      this.#redis.incr(key, (err, result) => {
        if (err === null) return done(null, result)
        turnLocal(err)
        this.#local.incr(key, done, timeWindow, max)
      }, timeWindow, max)
    }

    child (options: StoreOptions): Store {
      return new Store(options)
    }
  }

  return {
    // The plugin's types give child() a route's options; at run time it is given the merged ones.
    Store: Store as unknown as FastifyRateLimitStoreCtor,
    close: async () => {
      closed = true
      clearTimeout(probe)
      // QUIT is bounded like any command; the connection goes either way.
      await redis.quit().catch(() => {})
      redis.disconnect()
    }
  }
}
