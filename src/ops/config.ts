import { integer, oneOf, optional, section, string, text, type ValuesOf } from '../config/section.ts'

// What an operator sets to watch the service: its logs, its metrics, and its traces. Traces read
// the OpenTelemetry SDK's own variables, as the SDK reads them (an empty one is an unset one);
// what the SDK would only warn about and ignore, a typo in a sampler's name, say, stops the start
// here, as every other bad value does.

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]
const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = typeof SAMPLERS[number]
/** A sampler that keeps a share of new traces, OTEL_TRACES_SAMPLER_ARG's ratio (parent-based or not). */
export const takesRatio = (sampler: string): boolean => sampler.endsWith('traceidratio')
const otel = (description: string) => optional(string({ description }))

const variables = {
  LOG_LEVEL: oneOf(LOG_LEVELS, { default: 'info', description: 'Logs are JSON lines (pino) on stdout; at `info` and below, one access line per request, written in 4 KiB batches (warnings at once; every exit but a SIGKILL flushes: [operating](operating.md#access-logs)). The `Authorization` header is never logged.' }),
  METRICS_PORT: optional(integer(0, 65535, { description: 'Unset: no metrics. Port of a second listener that serves Prometheus metrics at `GET /metrics` (`0` picks a free one). Never on the API port.' })),
  METRICS_HOST: text({ default: '127.0.0.1', description: 'Address of the metrics listener; `0.0.0.0` to let a scraper on another host in.' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: otel('Unset: no traces. The OpenTelemetry collector\'s OTLP/HTTP endpoint (`http://collector:4318`). Setting it, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, turns [traces](operating.md#traces) on; unset, no OpenTelemetry module is loaded.'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otel('The traces\' full URL (`…/v1/traces`), instead of `OTEL_EXPORTER_OTLP_ENDPOINT`.'),
  OTEL_TRACES_EXPORTER: otel('Unset: `otlp`. `otlp` (OTLP over HTTP), `console` (spans on stdout, for development; on by itself), or `none` (off).'),
  OTEL_EXPORTER_OTLP_PROTOCOL: otel('Unset: `http/protobuf`. Or `http/json`; OTLP over gRPC is not offered.'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otel('The same for traces alone, over `OTEL_EXPORTER_OTLP_PROTOCOL`.'),
  OTEL_SERVICE_NAME: otel('Unset: `plant-store`. The service\'s name in its traces.'),
  OTEL_RESOURCE_ATTRIBUTES: otel('Other resource attributes (`deployment.environment.name=prod`); `service.name` here names the service too.'),
  OTEL_TRACES_SAMPLER: otel(`Unset: \`parentbased_always_on\`. Which requests are traced (${SAMPLERS.join(', ')}): a caller's \`traceparent\` decides for its request; for the others, every one, or with \`parentbased_traceidratio\` and a ratio, that share.`),
  OTEL_TRACES_SAMPLER_ARG: otel('The sampler\'s ratio, from 0 to 1 (unset: 1).'),
  OTEL_SDK_DISABLED: otel('`true` turns traces off, whatever else is set.')
}

export const opsConfig = section({
  title: 'Operations: logs, metrics and traces',
  notes: 'Other `OTEL_*` variables are read by the OpenTelemetry SDK as it documents them: `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (10 s), `OTEL_BSP_MAX_QUEUE_SIZE` (2048 spans waiting for export, the most held), `OTEL_BSP_SCHEDULE_DELAY` (100 ms here; the SDK defaults to 5 s), `OTEL_PROPAGATORS` (unset: `tracecontext,baggage`; also `b3`, `b3multi`, `none`), `OTEL_NODE_RESOURCE_DETECTORS` (unset: all of `env`, `host`, `os`, `process`, `serviceinstance`), the span limits (`OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT` and the others).',
  variables,
  read: ({ values, problem }) => ({
    logLevel: values.LOG_LEVEL,
    metricsPort: values.METRICS_PORT,
    metricsHost: values.METRICS_HOST,
    tracing: tracing(values, problem)
  })
})

export type OpsConfig = ReturnType<typeof opsConfig.read>
export type TracingConfig = NonNullable<OpsConfig['tracing']>

/** Traces are on when an OTLP endpoint or a traces exporter is set (and OTEL_SDK_DISABLED is not true). */
function tracing (values: ValuesOf<typeof variables>, problem: (message: string) => void) {
  const otel = (name: keyof ValuesOf<typeof variables>): string | undefined => (values[name] as string | undefined)?.trim() || undefined
  const exporter = otel('OTEL_TRACES_EXPORTER')
  const endpoint = otel('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? otel('OTEL_EXPORTER_OTLP_ENDPOINT')
  if (otel('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || exporter === 'none') return undefined
  if (exporter === undefined && endpoint === undefined) return undefined
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'console') {
    problem(`OTEL_TRACES_EXPORTER must be otlp, console or none, got "${exporter}"`)
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const) {
    const value = otel(name)
    if (value === undefined) continue
    let url: URL | undefined
    try {
      url = new URL(value)
    } catch {}
    if (url === undefined || !['http:', 'https:'].includes(url.protocol)) problem(`${name} must be an http:// or https:// URL, got "${value}"`)
  }
  const protocol = otel('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? otel('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf'
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    problem(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (OTLP over HTTP), got "${protocol}"`)
  }
  // The SDK's defaults: parent-based, always on; a ratio of 1.
  const sampler = (otel('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as SamplerName
  if (!SAMPLERS.includes(sampler)) problem(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${sampler}"`)
  const ratio = otel('OTEL_TRACES_SAMPLER_ARG')
  if (takesRatio(sampler) && ratio !== undefined && !(Number(ratio) >= 0 && Number(ratio) <= 1)) {
    problem(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${ratio}"`)
  }
  const named = otel('OTEL_SERVICE_NAME') !== undefined || /(^|,)\s*service\.name\s*=/.test(values.OTEL_RESOURCE_ATTRIBUTES ?? '')
  return {
    exporter: exporter === 'console' ? 'console' as const : 'otlp' as const,
    protocol: protocol === 'http/json' ? 'http/json' as const : 'http/protobuf' as const,
    serviceName: named ? undefined : 'plant-store',
    sampler: { name: sampler, ratio: ratio === undefined ? 1 : Number(ratio) }
  }
}
