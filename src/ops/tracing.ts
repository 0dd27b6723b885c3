import { createNoopMeter, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Attributes, type AttributeValue, type Context, type DiagLogger, type Link, type MeterProvider, type SpanContext, type SpanStatus, type Tracer } from '@opentelemetry/api'
import { getNumberFromEnv } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ConsoleSpanExporter, ParentBasedSampler, RandomIdGenerator, SamplingDecision, SimpleSpanProcessor, TraceIdRatioBasedSampler, type IdGenerator, type Sampler, type SamplingResult, type SpanProcessor, type TracerProvider } from '@opentelemetry/sdk-trace'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { takesRatio, type TracingConfig } from './config.ts'
import { startTracerProvider } from './trace-provider.ts'
import { FreshTraceRatio } from './trace-ratio.ts'

// OpenTelemetry traces (server.ts starts them, when OTEL_* says so, before the app and its store
// load): the SDK's tracer provider (trace-provider.ts), configured by its own OTEL_* variables
// (endpoint, headers, timeout, resource, sampler, the batch queue), exporting over OTLP/HTTP.
// Off, this module and every OpenTelemetry package stay unloaded. Only traces are exported:
// metrics are Prometheus's (METRICS_PORT) and logs are the JSON lines on stdout, which carry the
// trace ids.
//
// Sampling is decided once, as a request arrives (Tracing.arrive), before any span is made: the
// sampler OTEL_TRACES_SAMPLER names, built from the SDK's own classes as the SDK would build it,
// judges the caller's traceparent and a fresh trace id (a ratio sampler's, on the id's words before
// they are written out: FreshTraceRatio). A request it drops gets nothing: the hooks
// of trace-spans.ts find nothing on it and return. A request it keeps gets its ids at once (its log
// lines and its commit's links need them) and a plain record of what its span will hold; the span
// itself is made with the SDK once the request has ended (Tracing.end), in a batch with the other
// kept requests' (as many as an export takes, or after KEPT_WAIT_MS): the same span, with the
// record's times, its ids and the verdict carried to the SDK's sampler, so that the decision is
// not made twice. Their group commits' spans are records too (Tracing.begin), made in the same batches.
// Why in a batch: made one at a time among the requests the sampler drops, the SDK's code and data
// are cold each time, and a span cost several times what it does when every request is kept
// (docs/performance.md, "Traces"); at one in ten, most commits hold a kept create.
//
// Export is batched and off the request path: a collector that is down or hangs changes nothing
// for clients. The queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048 spans): past it spans are
// dropped, and counted, by the SDK's own span-processor metric, which we read.

/** The SDK's self-observability counter: spans a processor finished, with error.type when lost. */
const SPANS_PROCESSED = 'otel.sdk.processor.span.processed'
// Probes answer load balancers every few seconds: a trace each would drown the real ones.
const UNTRACED = /^\/(healthz|readyz)(\?|$)/

// What a request is judged by: its trace id and its caller's trace, never its attributes or links.
const NO_ATTRIBUTES: Attributes = Object.freeze({})
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[]
// Kept requests' spans are made as many at a time as an export takes (batchSizes), so that they
// are exported as soon as made, or this long after the first of them ended.
const KEPT_WAIT_MS = 100

/**
 * A kept span, while it runs: its ids, and what it will hold once made (Tracing.end). A request's:
 * the hooks of trace-spans.ts add attributes as each part ends, and its commit a link. A group
 * commit's (Tracing.begin): its outcomes as it ends.
 */
export interface KeptSpan {
  readonly spanContext: SpanContext
  readonly parent: Context
  readonly verdict: SamplingResult
  readonly name: string
  readonly kind: SpanKind
  /** performance.now() as it began (a request arrived), and as it ended (its answer did). */
  readonly start: number
  end: number
  readonly attributes: Record<string, AttributeValue>
  readonly links: Link[]
  status?: SpanStatus
}

// A verdict to keep, and nothing more: a new trace's that a ratio keeps (as the SDK's ratio sampler
// answers it), and a group commit's span, a trace of its own, kept as the SDK's parent-based sampler
// keeps a root span.
const KEPT: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED })

/** OTEL_TRACES_SAMPLER's sampler, from the SDK's classes, as the SDK builds it from the same variables. */
function samplerOf ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : takesRatio(name) ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/**
 * The SDK's sampler: a kept span takes the verdict it was recorded with (set for the one startSpan
 * call that makes it: a request's, as it arrived; a group commit's, kept); any other span (the
 * commit's statements, on PostgreSQL) follows its parent, and as a root is sampled.
 */
class VerdictSampler implements Sampler {
  readonly #otherwise = new ParentBasedSampler({ root: new AlwaysOnSampler() })
  verdict: SamplingResult | undefined

  shouldSample (...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    return this.verdict ?? this.#otherwise.shouldSample(...args)
  }

  toString (): string {
    return 'VerdictSampler'
  }
}

/** The SDK's ids, but for a kept request's span, whose ids were drawn as it arrived (set for its startSpan). */
class JudgedIds implements IdGenerator {
  readonly random = new RandomIdGenerator()
  judged: SpanContext | undefined

  generateTraceId (): string {
    return this.judged?.traceId ?? this.random.generateTraceId()
  }

  generateSpanId (): string {
    return this.judged?.spanId ?? this.random.generateSpanId()
  }
}

/** Told of spans that never reached the collector: queue_full (dropped), or the export's error. */
export type LostSpans = (count: number, reason: string) => void

/**
 * A MeterProvider for the span processor's own metrics alone: it hands the lost-span counts to the
 * service's metrics (ops/metrics.ts), and measures nothing else.
 */
function lostSpansMeter (lost: () => LostSpans | undefined): MeterProvider {
  const noop = createNoopMeter()
  // Every instrument the no-op meter's, but the one counter that tells of lost spans.
  const meter: ReturnType<MeterProvider['getMeter']> = Object.create(noop)
  meter.createCounter = (name, options) => name !== SPANS_PROCESSED
    ? noop.createCounter(name, options)
    : Object.assign(noop.createCounter(name, options), {
      add: (count: number, attributes?: Attributes) => {
        const reason = attributes?.['error.type']
        if (typeof reason === 'string') lost()?.(count, reason)
      }
    })
  return { getMeter: () => meter }
}

/** The batch processor's sizes, from OTEL_BSP_* at the SDK's defaults: an export never more than the queue holds, as the SDK clamps it. */
function batchSizes (): { queue: number, batch: number } {
  const queue = getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048
  return { queue, batch: Math.min(getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512, queue) }
}

/** The span processor of OTEL_TRACES_EXPORTER; of the two OTLP exporters, only the protocol's loads. */
async function spanProcessor (config: TracingConfig, meterProvider: MeterProvider, { queue, batch }: ReturnType<typeof batchSizes>): Promise<SpanProcessor> {
  if (config.exporter === 'console') return new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter(), selfObsMeterProvider: meterProvider })
  // The exporters read OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression) themselves.
  const { OTLPTraceExporter } = config.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto')
  const exporter = new OTLPTraceExporter()
  return new BatchSpanProcessor({
    exporter,
    selfObsMeterProvider: meterProvider,
    maxQueueSize: queue,
    // As often as the kept spans are made, unless OTEL_BSP_SCHEDULE_DELAY says otherwise: at the
    // SDK's 5 s, spans wait at one in ten for a full export (a third of a second under load), long
    // enough to be promoted: some 10 MiB more peak RSS (docs/performance.md, "Traces").
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? KEPT_WAIT_MS,
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: batch
  })
}

/** What Tracing works with, made by startTracing: the provider, and the sampler and ids it was given. */
interface Parts {
  readonly provider: TracerProvider
  readonly sampler: Sampler
  /** With a ratio sampler, a new trace's verdict before its id is written out. */
  readonly fresh: FreshTraceRatio | undefined
  readonly ids: JudgedIds
  readonly verdicts: VerdictSampler
  /** Where the span processor's lost spans are told (Tracing.countLost). */
  readonly lost: { to?: LostSpans }
  /** An export's spans at most: the kept requests' made at once. */
  readonly batch: number
}

export class Tracing {
  readonly #provider: TracerProvider
  readonly #sampler: Sampler
  readonly #fresh: FreshTraceRatio | undefined
  readonly #ids: JudgedIds
  readonly #verdicts: VerdictSampler
  readonly #tracer: Tracer
  readonly #lost: { to?: LostSpans }
  readonly #batch: number
  #ended: KeptSpan[] = []
  #timer: NodeJS.Timeout | undefined

  constructor ({ provider, sampler, fresh, ids, verdicts, lost, batch }: Parts) {
    this.#provider = provider
    this.#sampler = sampler
    this.#fresh = fresh
    this.#ids = ids
    this.#verdicts = verdicts
    this.#lost = lost
    this.#batch = batch
    this.#tracer = provider.getTracer('plant-store')
  }

  /**
   * The sampler's verdict on a request, as it arrives: kept, its ids and the record of its span, in
   * the caller's trace; undefined when dropped (and for the probes, never traced).
   */
  arrive (request: FastifyRequest): KeptSpan | undefined {
    if (UNTRACED.test(request.url)) return undefined
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    const caller = trace.getSpanContext(parent)
    let traceId: string | undefined
    let verdict: SamplingResult
    if (caller === undefined && this.#fresh !== undefined) {
      traceId = this.#fresh.keep()
      if (traceId === undefined) return undefined
      verdict = KEPT
    } else {
      // The caller's trace, or a new one: the id a ratio sampler judges is the one the trace gets.
      traceId = caller?.traceId ?? this.#ids.random.generateTraceId()
      verdict = this.#sampler.shouldSample(parent, traceId, request.method, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS)
      if (verdict.decision !== SamplingDecision.RECORD_AND_SAMPLED) return undefined
    }
    // Fastify 5 builds routeOptions anew at each read: once, and for a kept request only.
    const route = request.routeOptions.url
    const query = request.url.indexOf('?')
    // HTTP semantic conventions: a server span is named by its method and route template.
    const attributes: Record<string, AttributeValue> = { 'http.request.method': request.method, 'url.path': query === -1 ? request.url : request.url.slice(0, query) }
    if (route !== undefined) attributes['http.route'] = route
    return {
      spanContext: { traceId, spanId: this.#ids.random.generateSpanId(), traceFlags: TraceFlags.SAMPLED },
      parent,
      verdict,
      name: route === undefined ? request.method : `${request.method} ${route}`,
      kind: SpanKind.SERVER,
      start: performance.now(),
      end: 0,
      attributes,
      links: []
    }
  }

  /**
   * A span that kept requests make together (their group commit's), beginning now: a trace of its
   * own, its ids drawn at once (its requests link to it, and PostgreSQL's statements are its children).
   */
  begin (name: string, kind: SpanKind, attributes: Record<string, AttributeValue>, links: Link[]): KeptSpan {
    const spanContext = { traceId: this.#ids.random.generateTraceId(), spanId: this.#ids.random.generateSpanId(), traceFlags: TraceFlags.SAMPLED }
    return { spanContext, parent: ROOT_CONTEXT, verdict: KEPT, name, kind, start: performance.now(), end: 0, attributes, links }
  }

  /** A kept span has ended: it is made with the next batch. */
  end (kept: KeptSpan): void {
    kept.end = performance.now()
    this.#ended.push(kept)
    if (this.#ended.length >= this.#batch) this.#spans()
    else this.#timer ??= setTimeout(() => this.#spans(), KEPT_WAIT_MS).unref()
  }

  /** The kept spans that have ended, made with the SDK, each with its record's ids and times. */
  #spans (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const ended = this.#ended
    this.#ended = []
    try {
      for (const kept of ended) {
        this.#ids.judged = kept.spanContext
        this.#verdicts.verdict = kept.verdict
        // The attributes are set on the span, not given to startSpan, which checks and copies them
        // twice: the verdict that could have read them is already made.
        const span = this.#tracer.startSpan(kept.name, { kind: kept.kind, startTime: kept.start, links: kept.links }, kept.parent).setAttributes(kept.attributes)
        if (kept.status !== undefined) span.setStatus(kept.status)
        span.end(kept.end)
      }
    } finally {
      this.#ids.judged = undefined
      this.#verdicts.verdict = undefined
    }
  }

  /** Where lost spans are counted (the metrics). */
  countLost (lost: LostSpans): void {
    this.#lost.to = lost
  }

  /** The SDK's own complaints (a collector that cannot be reached), as warnings in the service's log. */
  logTo (log: FastifyBaseLogger): void {
    const warn = (message: string, ...args: unknown[]) => log.warn({ problem: [message, ...args.map(String)].join(' ') }, 'tracing')
    const quiet = () => {}
    const logger: DiagLogger = { error: warn, warn, info: quiet, debug: quiet, verbose: quiet }
    diag.setLogger(logger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true })
  }

  /** Flushes what is queued, for at most `ms`: a collector that hangs never holds the exit. */
  async shutdown (ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
    this.#spans()
    try {
      return await Promise.race([this.#provider.shutdown().then(() => true, () => false), deadline])
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Traces, for a service on PostgreSQL or not: pg's instrumentation loads only for PostgreSQL. */
export async function startTracing (config: TracingConfig, { postgres }: { postgres: boolean }): Promise<Tracing> {
  const sizes = batchSizes()
  const fresh = takesRatio(config.sampler.name) ? new FreshTraceRatio(config.sampler.ratio) : undefined
  const parts = { sampler: samplerOf(config.sampler), fresh, ids: new JudgedIds(), verdicts: new VerdictSampler(), lost: {} as Parts['lost'], batch: sizes.batch }
  const provider = await startTracerProvider({
    sampler: parts.verdicts,
    idGenerator: parts.ids,
    spanProcessors: [await spanProcessor(config, lostSpansMeter(() => parts.lost.to), sizes)]
  }, { serviceName: config.serviceName, contexts: postgres })
  if (postgres) {
    const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg')
    // pg's statements, under the span of the commit that runs them, and only there: made, it
    // wraps pg as the store loads it, and traces through the provider just registered.
    new PgInstrumentation({ requireParentSpan: true }) // eslint-disable-line no-new
  }
  return new Tracing({ ...parts, provider })
}
