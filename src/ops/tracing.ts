import { FastifyOtelInstrumentation } from '@fastify/otel'
import { createNoopMeter, diag, DiagLogLevel, type Attributes, type DiagLogger, type MeterProvider } from '@opentelemetry/api'
import { getNumberFromEnv } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace'
import type { FastifyBaseLogger } from 'fastify'
import type { TracingConfig } from '../config.js'

// OpenTelemetry traces (server.ts starts them, when OTEL_* says so, before the app and its store
// load): the Node SDK, configured by its own OTEL_* variables (endpoint, headers, timeout,
// resource, sampler, the batch queue), exporting over OTLP/HTTP. Off, this module and every
// OpenTelemetry package stay unloaded. Only traces are exported: metrics are Prometheus's
// (METRICS_PORT) and logs are the JSON lines on stdout, which carry the trace ids.
//
// Export is batched and off the request path: a collector that is down or hangs changes nothing
// for clients. The queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048 spans): past it spans are
// dropped, and counted, by the SDK's own span-processor metric, which we read.

/** The SDK's self-observability counter: spans a processor finished, with error.type when lost. */
const SPANS_PROCESSED = 'otel.sdk.processor.span.processed'
// Probes answer load balancers every few seconds: a trace each would drown the real ones.
const UNTRACED = /^\/(healthz|readyz)(\?|$)/

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
    ignorePaths: ({ url }) => UNTRACED.test(url),
    // HTTP semantic conventions name a server span by its method and route template. A span the
    // sampler dropped records nothing: its name is not even built.
    requestHook: (span, request) => {
      if (span.isRecording()) span.updateName(request.routeOptions.url === undefined ? request.method : `${request.method} ${request.routeOptions.url}`)
    }
  })

  readonly #sdk: NodeSDK
  #lost: LostSpans | undefined

  /** Starts the SDK; `store` is the instrumentation of the store's driver, if it has one. */
  constructor (config: TracingConfig, store: Instrumentations) {
    this.#sdk = new NodeSDK({
      serviceName: config.serviceName,
      spanProcessors: [spanProcessor(config, lostSpansMeter(() => this.#lost))],
      instrumentations: [this.fastify, ...store],
      metricReaders: [],
      logRecordProcessors: []
    })
    this.#sdk.start()
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
