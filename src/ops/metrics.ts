import type { FastifyInstance } from 'fastify'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { totalmem } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import client from 'prom-client'
import type { OpsConfig } from './config.ts'
import { KeysUnavailableError, OverloadedError, OWN_CODE_PREFIX, ShuttingDownError, StoreBusyError, StoreTimeoutError, StoreUnavailableError } from '../errors.ts'
import type { JwtGuardObserver } from '../security/auth.ts'
import type { KeySetObserver } from '../security/jwks.ts'
import type { JwtOutcome } from '../security/jwt.ts'
import type { SharedCountObserver } from '../security/shared-rate-limit.ts'
import type { TokensFileObserver } from '../security/token-file.ts'
import type { StoreObserver } from '../store/group-commit.ts'
import type { LostSpans } from './tracing.ts'

// Prometheus metrics (prom-client), served on a listener of their own (METRICS_PORT, by default
// on 127.0.0.1), never on the public API port. With METRICS_PORT unset nothing is measured.

declare module 'fastify' {
  interface FastifyInstance {
    /** http://host:port/metrics of the metrics listener, once it listens. */
    metricsUrl?: string
  }
}

// The route label of a request that matched no route: never its raw URL, which anyone can vary.
const UNMATCHED = 'unmatched'
// The reason of a 503 that is not one of the service's own errors.
const OTHER = 'other'

/** The bounds the service sheds or refuses at, exported beside what they bound, so that alerts compare the two whatever is configured. */
export interface Limits {
  /** MAX_PENDING_CREATES. */
  maxPendingCreates: number
  /** MAX_EVENT_LOOP_DELAY_MS; 0: no shedding. */
  maxEventLoopDelayMs: number
}
// Every label set a counter may take is exported from 0 where it is known (Prometheus' advice), so
// that a quiet dashboard reads 0, not "No data": each outcome of a JWT (a Record, so the compiler
// holds the list to the type), each key fetch, each reason an API route may answer 503 for.
const JWT_OUTCOMES = Object.keys({ accepted: 1, insufficient_scope: 1, unavailable: 1, oversize: 1, malformed: 1, disallowed_algorithm: 1, unknown_key: 1, bad_signature: 1, expired: 1, not_yet_valid: 1, bad_claims: 1 } satisfies Record<JwtOutcome | 'insufficient_scope', 1>)

/** The reason a 503 is counted under: our own error's code, without its prefix, in lower case; else other. */
const reasonOf = (code: string | undefined): string => code?.startsWith(OWN_CODE_PREFIX) === true ? code.slice(OWN_CODE_PREFIX.length).toLowerCase() : OTHER
// The reasons a route may answer 503 for, named from the errors themselves.
const reasonFor = (Unavailable: new () => { code: string }): string => reasonOf(new Unavailable().code)
const STORE_UNAVAILABLE = reasonFor(StoreUnavailableError)
const STORE_REASONS = [reasonFor(StoreBusyError), reasonFor(StoreTimeoutError), STORE_UNAVAILABLE, reasonFor(ShuttingDownError)]
const OVERLOADED = reasonFor(OverloadedError)
const KEYS_UNAVAILABLE = reasonFor(KeysUnavailableError)

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export class Metrics {
  readonly registry = new client.Registry()
  readonly #requests = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, rejections included, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry]
  })

  readonly #creates = new client.Counter({
    name: 'plant_store_creates_total',
    help: 'Answered creates by outcome: created (new plant stored), replayed (identical plant already stored), conflict (a different plant holds the id).',
    labelNames: ['outcome'] as const,
    registers: [this.registry]
  })

  readonly #commits = new client.Histogram({
    name: 'plant_store_commit_duration_seconds',
    help: 'Time each store commit took, its durable flush included; one observation per commit.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry]
  })

  readonly #batches = new client.Histogram({
    name: 'plant_store_batch_size',
    help: 'Creates per store commit (group commit).',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers: [this.registry]
  })

  readonly #pending = new client.Gauge({
    name: 'plant_store_pending_creates',
    help: 'Creates waiting for a commit now, queued or being committed. Near MAX_PENDING_CREATES, creates are refused with 503.',
    registers: [this.registry]
  })

  readonly #waits = new client.Histogram({
    name: 'plant_store_create_wait_seconds',
    help: 'Time from a create reaching the store to its commit answering it; a slow disk or database shows here first.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry]
  })

  readonly #unavailable = new client.Counter({
    name: 'plant_store_unavailable_total',
    help: 'Requests answered 503, by route template and reason: store_busy (MAX_PENDING_CREATES creates were waiting), store_timeout, store_unavailable, overloaded (event-loop lag past MAX_EVENT_LOOP_DELAY_MS), keys_unavailable (the identity provider\'s keys), shutting_down, or other.',
    labelNames: ['route', 'reason'] as const,
    registers: [this.registry]
  })

  readonly #jwts = new client.Counter({
    name: 'plant_store_jwt_total',
    help: 'Identity-provider access tokens judged, by outcome: accepted, insufficient_scope (403), unavailable (503: the keys could not be fetched), or why one was refused (401): oversize, malformed, disallowed_algorithm, unknown_key, bad_signature, expired, not_yet_valid, bad_claims.',
    labelNames: ['outcome'] as const,
    registers: [this.registry]
  })

  readonly #keyFetches = new client.Counter({
    name: 'plant_store_jwks_fetches_total',
    help: 'Fetches from the identity provider, by document (discovery, jwks) and result (ok, failed).',
    labelNames: ['document', 'result'] as const,
    registers: [this.registry]
  })

  readonly #lostSpans = new client.Counter({
    name: 'plant_store_trace_spans_lost_total',
    help: 'Spans that never reached the trace collector, by reason: queue_full (dropped: the export queue, OTEL_BSP_MAX_QUEUE_SIZE, was full), or the error their export failed with.',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  /** What tracing reports lost spans to; with traces on, the count of dropped spans is exported from 0. */
  lostSpans (): LostSpans {
    this.#lostSpans.inc({ reason: 'queue_full' }, 0)
    return (count, reason) => this.#lostSpans.inc({ reason }, count)
  }

  /** With RATE_LIMIT_REDIS_URL: what the rate limits report whether they are counted in Redis to. */
  sharedRateLimit (): SharedCountObserver {
    const shared = new client.Gauge({
      name: 'plant_store_rate_limit_shared',
      help: 'With RATE_LIMIT_REDIS_URL: 1 while this instance counts the rate limits in Redis, together with every other; 0 while Redis does not answer and it counts on its own, in memory.',
      registers: [this.registry]
    })
    return (now) => shared.set(now ? 1 : 0)
  }

  /** With API_TOKENS_FILE: what its reloads report to, counted from 0. */
  tokensFile (): TokensFileObserver {
    const reloads = new client.Counter({
      name: 'plant_store_api_tokens_reloads_total',
      help: 'Reloads of API_TOKENS_FILE (a change seen, or SIGHUP), by result: taken, or refused (the file failed the checks; the tokens in force stayed).',
      labelNames: ['result'] as const,
      registers: [this.registry]
    })
    const refused = new client.Gauge({
      name: 'plant_store_api_tokens_file_refused',
      help: '1 while the API_TOKENS_FILE last read was refused (the tokens in force are an older file\'s); 0 once a file is taken.',
      registers: [this.registry]
    })
    for (const result of ['taken', 'refused']) reloads.inc({ result }, 0)
    refused.set(0)
    return (taken) => {
      reloads.inc({ result: taken ? 'taken' : 'refused' })
      refused.set(taken ? 0 : 1)
    }
  }

  /** With an identity provider: what the bearer guard reports each JWT's outcome to, and the key set its fetches; each counted from 0. */
  jwtObservers (): { guard: JwtGuardObserver, keySet: KeySetObserver } {
    for (const outcome of JWT_OUTCOMES) this.#jwts.inc({ outcome }, 0)
    for (const document of ['discovery', 'jwks']) for (const result of ['ok', 'failed']) this.#keyFetches.inc({ document, result }, 0)
    return {
      guard: (outcome) => this.#jwts.inc({ outcome }),
      keySet: { fetched: (document, ok) => this.#keyFetches.inc({ document, result: ok ? 'ok' : 'failed' }) }
    }
  }

  /** Counts each API route's 503s from 0, for every reason it may answer one: the store's, shedding's when on, the keys' with JWTs; /readyz's, the store's. */
  expectUnavailable (apiRoutes: string[], readiness: string, { jwt }: { jwt: boolean }): void {
    const reasons = [...STORE_REASONS, ...(this.#shedding ? [OVERLOADED] : []), ...(jwt ? [KEYS_UNAVAILABLE] : [])]
    for (const route of apiRoutes) for (const reason of reasons) this.#unavailable.inc({ route, reason }, 0)
    this.#unavailable.inc({ route: readiness, reason: STORE_UNAVAILABLE }, 0)
  }

  /** What the store reports to. */
  readonly store: StoreObserver = {
    committed: (size, seconds) => {
      this.#commits.observe(seconds)
      this.#batches.observe(size)
    },
    answered: (outcome) => this.#creates.inc({ outcome }),
    pending: (depth) => this.#pending.set(depth),
    waited: (seconds) => this.#waits.observe(seconds)
  }

  readonly #shedding: boolean

  constructor ({ maxPendingCreates, maxEventLoopDelayMs }: Limits) {
    this.#shedding = maxEventLoopDelayMs > 0
    // Process metrics: memory, CPU, event-loop lag, GC, handles.
    client.collectDefaultMetrics({ register: this.registry })
    for (const outcome of ['created', 'replayed', 'conflict']) this.#creates.inc({ outcome }, 0)
    const limit = (name: string, help: string, value: number) => new client.Gauge({ name, help, registers: [this.registry] }).set(value)
    limit('plant_store_pending_creates_limit', 'MAX_PENDING_CREATES: past this many creates waiting for a commit, a create is refused with 503.', maxPendingCreates)
    limit('plant_store_event_loop_delay_limit_seconds', 'MAX_EVENT_LOOP_DELAY_MS, in seconds: past this event-loop lag, API requests are shed with 503; 0 when shedding is off.', maxEventLoopDelayMs / 1000)
    // Node reads the cgroup's limit (a container's); with none, the machine's memory is the bound.
    const constrained = process.constrainedMemory()
    limit('plant_store_memory_limit_bytes', 'The memory the process may use before it is killed: its cgroup\'s (container\'s) limit, or the machine\'s memory when it has none.', constrained > 0 && constrained < totalmem() ? constrained : totalmem())
    limit('plant_store_heap_limit_bytes', 'V8\'s heap limit: past it, the process aborts with "JavaScript heap out of memory".', getHeapStatistics().heap_size_limit)
  }

  /** Counts every answered request on `app`, and serves /metrics on its own listener while `app` runs. */
  serve (app: FastifyInstance, config: Pick<OpsConfig, 'metricsPort' | 'metricsHost'>): void {
    app.addHook('onResponse', (request, reply, done) => {
      this.#requests.observe({ method: request.method, route: request.routeOptions.url ?? UNMATCHED, status_code: reply.statusCode }, reply.elapsedTime / 1000)
      done()
    })
    // Runs before the error handler, for an error only; each 503 is one of ours, named by its code.
    app.addHook('onError', (request, _reply, error, done) => {
      if (error.statusCode === 503) {
        this.#unavailable.inc({ route: request.routeOptions.url ?? UNMATCHED, reason: reasonOf(error.code) })
      }
      done()
    })
    const server = createServer((request, response) => { this.#answer(request.method, request.url, response).catch((err) => response.destroy(err)) })
    app.decorate('metricsUrl', undefined)
    app.addHook('onReady', async () => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) => reject(new Error(`the metrics listener cannot start on ${config.metricsHost}:${config.metricsPort}: ${err.message}`)))
        server.listen(config.metricsPort, config.metricsHost, resolve)
      })
      const { address, family, port } = server.address() as AddressInfo
      app.metricsUrl = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}/metrics`
    })
    app.addHook('onClose', async () => await closeServer(server))
  }

  async #answer (method: string | undefined, url: string | undefined, response: ServerResponse): Promise<void> {
    if ((method === 'GET' || method === 'HEAD') && url?.split('?')[0] === '/metrics') {
      const body = await this.registry.metrics()
      response.writeHead(200, { 'content-type': this.registry.contentType })
      response.end(method === 'HEAD' ? undefined : body)
      return
    }
    const body = JSON.stringify({ error: 404, message: 'Not found: the metrics are at GET /metrics' })
    response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
    response.end(body)
  }
}

/** Stops listening and drops idle keep-alive connections (a scraper's), so the close is prompt. */
async function closeServer (server: Server): Promise<void> {
  if (!server.listening) return
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeAllConnections()
  await closed
}
