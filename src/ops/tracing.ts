import { createNoopMeter, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Attributes, type AttributeValue, type DiagLogger, type Link, type MeterProvider, type SpanContext } from '@opentelemetry/api'
import { getNumberFromEnv } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ConsoleSpanExporter, ParentBasedSampler, RandomIdGenerator, SamplingDecision, SimpleSpanProcessor, TraceIdRatioBasedSampler, type Sampler, type SpanProcessor, type TracerProvider } from '@opentelemetry/sdk-trace'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { takesRatio, type TracingConfig } from './config.ts'
import { KeptSpan, type KeptShared } from './kept-span.ts'
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
// of trace-spans.ts find nothing on it and return. A request it keeps gets its ids at once and a
// record of its span (kept-span.ts), which, once the request has ended (Tracing.end), is the span
// the SDK's span processor takes: with the ids, parent and trace state the SDK's tracer would give
// it. So is its group commit's span (Tracing.begin). PostgreSQL's statements, the one span this
// service does not make, are the SDK's tracer's, through the pg instrumentation.
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
// Unless OTEL_BSP_SCHEDULE_DELAY says otherwise, the ended spans are exported this often: at the
// SDK's 5 s, spans wait at one in ten for a full export (a third of a second under load), long
// enough to be promoted: some 10 MiB more peak RSS (docs/performance.md, "Traces").
const EXPORT_DELAY_MS = 100
// The service's spans' instrumentation scope, as the SDK's tracer of that name gives it.
const SCOPE = Object.freeze({ name: 'plant-store', version: undefined, schemaUrl: undefined })

/** OTEL_TRACES_SAMPLER's sampler, from the SDK's classes, as the SDK builds it from the same variables. */
function samplerOf ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : takesRatio(name) ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
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

/** The span processor of OTEL_TRACES_EXPORTER; of the two OTLP exporters, only the protocol's loads. */
async function spanProcessor (config: TracingConfig, meterProvider: MeterProvider): Promise<SpanProcessor> {
  if (config.exporter === 'console') return new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter(), selfObsMeterProvider: meterProvider })
  // The exporters read OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression) themselves;
  // the batch processor is given OTEL_BSP_*, unset the SDK's defaults.
  const { OTLPTraceExporter } = config.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto')
  const exporter = new OTLPTraceExporter()
  return new BatchSpanProcessor({
    exporter,
    selfObsMeterProvider: meterProvider,
    maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? EXPORT_DELAY_MS,
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')
  })
}

/** What Tracing works with, made by startTracing. */
interface Parts {
  readonly provider: TracerProvider
  /** Where the kept spans go once ended. */
  readonly processor: SpanProcessor
  /** What every kept span shares: the provider's resource, the scope, the span limits. */
  readonly shared: KeptShared
  readonly sampler: Sampler
  /** With a ratio sampler, a new trace's verdict before its id is written out. */
  readonly fresh: FreshTraceRatio | undefined
  /** Where the span processor's lost spans are told (Tracing.countLost). */
  readonly lost: { to?: LostSpans }
}

export class Tracing {
  readonly #provider: TracerProvider
  readonly #processor: SpanProcessor
  readonly #shared: KeptShared
  readonly #sampler: Sampler
  readonly #fresh: FreshTraceRatio | undefined
  readonly #ids = new RandomIdGenerator()
  readonly #lost: { to?: LostSpans }

  constructor ({ provider, processor, shared, sampler, fresh, lost }: Parts) {
    this.#provider = provider
    this.#processor = processor
    this.#shared = shared
    this.#sampler = sampler
    this.#fresh = fresh
    this.#lost = lost
  }

  /**
   * The sampler's verdict on a request, as it arrives: kept, its ids and the record of its span, in
   * the caller's trace; undefined when dropped (and for the probes, never traced).
   */
  arrive (request: FastifyRequest): KeptSpan | undefined {
    if (UNTRACED.test(request.url)) return undefined
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    // The caller's span, the parent the SDK's tracer would take: only a valid one.
    const extracted = trace.getSpanContext(parent)
    const caller = extracted !== undefined && trace.isSpanContextValid(extracted) ? extracted : undefined
    let traceId: string | undefined
    let traceState = caller?.traceState
    if (caller === undefined && this.#fresh !== undefined) {
      traceId = this.#fresh.keep()
      if (traceId === undefined) return undefined
    } else {
      // The caller's trace, or a new one: the id a ratio sampler judges is the one the trace gets.
      traceId = caller?.traceId ?? this.#ids.generateTraceId()
      const verdict = this.#sampler.shouldSample(parent, traceId, request.method, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS)
      if (verdict.decision !== SamplingDecision.RECORD_AND_SAMPLED) return undefined
      traceState = verdict.traceState ?? traceState
    }
    // Fastify 5 builds routeOptions anew at each read: once, and for a kept request only.
    const route = request.routeOptions.url
    const query = request.url.indexOf('?')
    // HTTP semantic conventions: a server span is named by its method and route template.
    const attributes: Record<string, AttributeValue> = { 'http.request.method': request.method, 'url.path': query === -1 ? request.url : request.url.slice(0, query) }
    if (route !== undefined) attributes['http.route'] = route
    const name = route === undefined ? request.method : `${request.method} ${route}`
    const context: SpanContext = { traceId, spanId: this.#ids.generateSpanId(), traceFlags: TraceFlags.SAMPLED, traceState }
    return new KeptSpan(name, SpanKind.SERVER, context, caller, attributes, [], this.#shared)
  }

  /**
   * A span that kept requests make together (their group commit's), beginning now: a trace of its
   * own, kept as the SDK's parent-based sampler keeps a root span, its ids drawn at once (its
   * requests link to it, and PostgreSQL's statements are its children).
   */
  begin (name: string, kind: SpanKind, attributes: Record<string, AttributeValue>, links: Link[]): KeptSpan {
    const context: SpanContext = { traceId: this.#ids.generateTraceId(), spanId: this.#ids.generateSpanId(), traceFlags: TraceFlags.SAMPLED }
    return new KeptSpan(name, kind, context, undefined, attributes, links, this.#shared)
  }

  /** A kept span has ended: to the span processor, which exports it with the next batch. */
  end (kept: KeptSpan): void {
    kept.end()
    this.#processor.onEnd(kept)
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
    try {
      return await Promise.race([this.#provider.shutdown().then(() => true, () => false), deadline])
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Traces, for a service on PostgreSQL or not: pg's instrumentation loads only for PostgreSQL. */
export async function startTracing (config: TracingConfig, { postgres }: { postgres: boolean }): Promise<Tracing> {
  const lost: Parts['lost'] = {}
  const processor = await spanProcessor(config, lostSpansMeter(() => lost.to))
  // Its sampler and ids are the SDK's defaults: they serve pg's statements, children of kept spans.
  const { provider, resource, limits } = await startTracerProvider({ spanProcessors: [processor] }, { serviceName: config.serviceName, contexts: postgres })
  if (postgres) {
    const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg')
    // pg's statements, under the span of the commit that runs them, and only there: made, it
    // wraps pg as the store loads it, and traces through the provider just registered.
    new PgInstrumentation({ requireParentSpan: true }) // eslint-disable-line no-new
  }
  const fresh = takesRatio(config.sampler.name) ? new FreshTraceRatio(config.sampler.ratio) : undefined
  return new Tracing({ provider, processor, shared: { resource, instrumentationScope: SCOPE, limits }, sampler: samplerOf(config.sampler), fresh, lost })
}
