import { context, diag, propagation, trace, type TextMapPropagator } from '@opentelemetry/api'
import { CompositePropagator, getNumberFromEnv, getStringListFromEnv, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { defaultResource, detectResources, envDetector, hostDetector, osDetector, processDetector, resourceFromAttributes, serviceInstanceIdDetector, type Resource, type ResourceDetector } from '@opentelemetry/resources'
import { TracerProvider, type SpanLimits, type TracerProviderOptions } from '@opentelemetry/sdk-trace'

// The trace half of the OpenTelemetry SDK, set up from the OTEL_* variables as NodeSDK sets it up
// from them (the resource and its detectors, the propagators, the span limits, the context
// manager), without NodeSDK: it loads the metrics and logs SDKs and all their exporters (gRPC's
// too), which this service never uses, and they took 23 MiB of RSS (docs/performance.md, "Traces").

// OTEL_NODE_RESOURCE_DETECTORS' names, NodeSDK's; unset, all of them.
const DETECTORS: Record<string, ResourceDetector> = {
  env: envDetector,
  host: hostDetector,
  os: osDetector,
  process: processDetector,
  serviceinstance: serviceInstanceIdDetector
}

/** OTEL_NODE_RESOURCE_DETECTORS' detectors: `all` (unset), `none`, or names among DETECTORS. */
function detectors (): ResourceDetector[] {
  const names = getStringListFromEnv('OTEL_NODE_RESOURCE_DETECTORS') ?? ['all']
  if (names.includes('all')) return Object.values(DETECTORS)
  if (names.includes('none')) return []
  return names.flatMap((name) => {
    if (DETECTORS[name] === undefined) diag.warn(`OTEL_NODE_RESOURCE_DETECTORS: no resource detector "${name}"`)
    return DETECTORS[name] ?? []
  })
}

/** OTEL_PROPAGATORS' propagators (unset: tracecontext and baggage); b3's package loads only when named. */
async function propagator (): Promise<TextMapPropagator | undefined> {
  const names = [...new Set(getStringListFromEnv('OTEL_PROPAGATORS') ?? ['tracecontext', 'baggage'])]
  if (names.includes('none')) return undefined
  const b3 = names.some((name) => name.startsWith('b3')) ? await import('@opentelemetry/propagator-b3') : undefined
  const propagators = names.flatMap((name): TextMapPropagator[] => {
    if (name === 'tracecontext') return [new W3CTraceContextPropagator()]
    if (name === 'baggage') return [new W3CBaggagePropagator()]
    if (name === 'b3') return [new b3!.B3Propagator()]
    if (name === 'b3multi') return [new b3!.B3Propagator({ injectEncoding: b3!.B3InjectEncoding.MULTI_HEADER })]
    diag.warn(`OTEL_PROPAGATORS: no propagator "${name}"`)
    return []
  })
  return new CompositePropagator({ propagators })
}

/** OTEL_SPAN_*_LIMIT and OTEL_ATTRIBUTE_*_LIMIT; unset, the SDK's defaults (its TracerProvider's). */
function spanLimits (): Required<SpanLimits> {
  return {
    attributeCountLimit: getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_COUNT_LIMIT') ?? 128,
    attributeValueLengthLimit: getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? Infinity,
    eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT') ?? 128,
    linkCountLimit: getNumberFromEnv('OTEL_SPAN_LINK_COUNT_LIMIT') ?? 128,
    attributePerEventCountLimit: getNumberFromEnv('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT') ?? getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT') ?? 128,
    attributePerLinkCountLimit: getNumberFromEnv('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT') ?? getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT') ?? 128
  }
}

/**
 * The tracer provider, registered as the API's, with its resource, propagators and limits from
 * OTEL_*; `serviceName` over the resource's when given. A context manager only with `contexts`:
 * the pg instrumentation finds a statement's parent span through it, and nothing else here needs
 * one (our spans are given their parents). With it, the resource and the span limits, which the
 * service's own spans take too (kept-span.ts).
 */
export async function startTracerProvider (config: Pick<TracerProviderOptions, 'spanProcessors'>, { serviceName, contexts }: { serviceName?: string, contexts: boolean }): Promise<{ provider: TracerProvider, resource: Resource, limits: Required<SpanLimits> }> {
  let resource = defaultResource().merge(detectResources({ detectors: detectors() }))
  if (serviceName !== undefined) resource = resource.merge(resourceFromAttributes({ 'service.name': serviceName }))
  const limits = spanLimits()
  const provider = new TracerProvider({ ...config, resource, spanLimits: limits })
  if (contexts) {
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  }
  const propagators = await propagator()
  if (propagators !== undefined) propagation.setGlobalPropagator(propagators)
  trace.setGlobalTracerProvider(provider)
  return { provider, resource, limits }
}
