import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, createContextKey, createNoopMeter, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, type Attributes, type Context, type DiagLogger, type MeterProvider } from '@opentelemetry/api'
import { getNumberFromEnv, isTracingSuppressed, suppressTracing } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ConsoleSpanExporter, ParentBasedSampler, RandomIdGenerator, SamplingDecision, SimpleSpanProcessor, TraceIdRatioBasedSampler, type Sampler, type SamplingResult, type SpanProcessor } from '@opentelemetry/sdk-trace'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import type { TracingConfig } from './config.js'

// OpenTelemetry traces (server.ts starts them, when OTEL_* says so, before the app and its store
// load): the Node SDK, configured by its own OTEL_* variables (endpoint, headers, timeout,
// resource, sampler, the batch queue), exporting over OTLP/HTTP. Off, this module and every
// OpenTelemetry package stay unloaded. Only traces are exported: metrics are Prometheus's
// (METRICS_PORT) and logs are the JSON lines on stdout, which carry the trace ids.
//
// Sampling is decided as a request arrives, before any span is made (Tracing.arrive): the
// sampler OTEL_TRACES_SAMPLER names, built from the SDK's own classes as the SDK would build it,
// judges a fresh trace id and the caller's traceparent. A request it drops runs with tracing
// suppressed: @fastify/otel's hooks see that and return at once, and the SDK makes no span for it;
// a request it keeps carries the verdict, which the SDK's sampler then applies to its spans, so
// the decision is made once. A sampled-out request still costs the traceparent's read, a trace id,
// its context, and a few hooks that find nothing to do (docs/performance.md).
//
// Export is batched and off the request path: a collector that is down or hangs changes nothing
// for clients. The queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048 spans): past it spans are
// dropped, and counted, by the SDK's own span-processor metric, which we read.

/** The SDK's self-observability counter: spans a processor finished, with error.type when lost. */
const SPANS_PROCESSED = 'otel.sdk.processor.span.processed'
// Probes answer load balancers every few seconds: a trace each would drown the real ones.
const UNTRACED = /^\/(healthz|readyz)(\?|$)/

/** A request's verdict, carried in its context for the SDK's sampler. */
const VERDICT = createContextKey('plant-store sampling verdict')

/** OTEL_TRACES_SAMPLER's sampler, from the SDK's classes, as the SDK builds it from the same variables. */
function samplerOf ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/**
 * The SDK's sampler: a span in a sampled request takes the verdict the request arrived with; any
 * other span (a group commit's, made only when a sampled create is in it, and its statements)
 * follows its parent, and as a root is sampled.
 */
class VerdictSampler implements Sampler {
  readonly #otherwise = new ParentBasedSampler({ root: new AlwaysOnSampler() })

  shouldSample (...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    return (args[0].getValue(VERDICT) as SamplingResult | undefined) ?? this.#otherwise.shouldSample(...args)
  }

  toString (): string {
    return 'VerdictSampler'
  }
}

type Instrumentations = NonNullable<NonNullable<ConstructorParameters<typeof NodeSDK>[0]>['instrumentations']>

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

function spanProcessor (config: TracingConfig, meterProvider: MeterProvider): SpanProcessor {
  if (config.exporter === 'console') return new SimpleSpanProcessor({ exporter: new ConsoleSpanExporter(), selfObsMeterProvider: meterProvider })
  // The exporters read OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression) themselves.
  const exporter = config.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter()
  return new BatchSpanProcessor({
    exporter,
    selfObsMeterProvider: meterProvider,
    maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')
  })
}

export class Tracing {
  /** Fastify's own instrumentation (@fastify/otel): the request span, the handler's. */
  readonly fastify = new FastifyOtelInstrumentation({
    registerOnInitialization: false,
    // The hooks that cost are traced by the service itself (trace-spans.ts): a span for every
    // other hook would cost more than the hooks do, on every request.
    instrumentHooks: false,
    instrumentHandler: true,
    // A span never holds an exception's stack trace.
    recordExceptions: false,
    // Asked by each of its hooks, in the request's context: a request the sampler dropped (arrive
    // suppressed its tracing) it leaves alone as it does a probe, with no span and no wrapper.
    ignorePaths: ({ url }) => UNTRACED.test(url) || isTracingSuppressed(context.active()),
    // HTTP semantic conventions name a server span by its method and route template.
    requestHook: (span, request) => {
      span.updateName(request.routeOptions.url === undefined ? request.method : `${request.method} ${request.routeOptions.url}`)
    }
  })

  readonly #sdk: NodeSDK
  readonly #sampler: Sampler
  readonly #ids = new RandomIdGenerator()
  #lost: LostSpans | undefined

  /** Starts the SDK; `store` is the instrumentation of the store's driver, if it has one. */
  constructor (config: TracingConfig, store: Instrumentations) {
    this.#sampler = samplerOf(config.sampler)
    this.#sdk = new NodeSDK({
      serviceName: config.serviceName,
      sampler: new VerdictSampler(),
      spanProcessors: [spanProcessor(config, lostSpansMeter(() => this.#lost))],
      instrumentations: [this.fastify, ...store],
      metricReaders: [],
      logRecordProcessors: []
    })
    this.#sdk.start()
  }

  /**
   * Runs `next` (the rest of the request's hooks, and so the request) in the context the sampler's
   * verdict gives it: the caller's trace, with tracing suppressed when the verdict is to drop it.
   */
  arrive (request: FastifyRequest, next: () => void): void {
    if (UNTRACED.test(request.url)) return next()
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    const verdict = this.#sampler.shouldSample(parent, this.#ids.generateTraceId(), 'request', SpanKind.SERVER, {}, [])
    const traced: Context = verdict.decision === SamplingDecision.RECORD_AND_SAMPLED ? parent.setValue(VERDICT, verdict) : suppressTracing(parent)
    context.with(traced, next)
  }

  /** Where lost spans are counted (the metrics). */
  countLost (lost: LostSpans): void {
    this.#lost = lost
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
      return await Promise.race([this.#sdk.shutdown().then(() => true, () => false), deadline])
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Traces, for a service on PostgreSQL or not: pg's instrumentation loads only for PostgreSQL. */
export async function startTracing (config: TracingConfig, { postgres }: { postgres: boolean }): Promise<Tracing> {
  // pg's statements, under the span of the commit that runs them, and only there.
  const store = postgres ? [new (await import('@opentelemetry/instrumentation-pg')).PgInstrumentation({ requireParentSpan: true })] : []
  return new Tracing(config, store)
}
