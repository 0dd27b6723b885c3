import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type AttributeValue, type Link, type SpanContext, type SpanStatus } from '@opentelemetry/api'
import { hrTimeToMilliseconds, TraceState } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace'
import t from 'tap'
import { KeptSpan, type KeptLimits } from '../../src/ops/kept-span.ts'

// A kept span is handed to the SDK's span processor as the span itself, not made through the SDK's
// Span: it must be the span the SDK would have made from the same record. Each case is made twice,
// through the SDK's tracer (the span started with the record's links and parent, its attributes set
// on it, its status, ended) and as a KeptSpan, under the same span limits; both are compared as
// the SDK's exporters read a finished span.

const CALLER: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, traceState: new TraceState('vendor=value'), isRemote: true }
const DEFAULTS: KeptLimits = { attributeCountLimit: 128, attributeValueLengthLimit: Infinity, linkCountLimit: 128 }
const ATTRIBUTES: Record<string, AttributeValue> = {
  'http.request.method': 'POST',
  'url.path': '/plants',
  'http.route': '/plants',
  'plant_store.auth.outcome': 'accepted',
  'plant_store.auth.duration_ms': 0.25,
  'http.response.status_code': 400
}
const linksTo = (count: number): Link[] => Array.from({ length: count }, (_, i) => ({ context: { traceId: CALLER.traceId, spanId: (i + 1).toString(16).padStart(16, '0'), traceFlags: TraceFlags.SAMPLED } }))

interface Case { limits: KeptLimits, parent?: SpanContext, links?: Link[], status?: SpanStatus }

/** The same record made by the SDK's tracer and as a KeptSpan. */
function both ({ limits, parent, links = [], status }: Case): { sdk: ReadableSpan, ours: KeptSpan, between: number } {
  const resource = resourceFromAttributes({ 'service.name': 'kept-span-test' })
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ resource, spanLimits: limits, spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const ours = new KeptSpan('POST /plants', SpanKind.SERVER, { traceId: '', spanId: '', traceFlags: TraceFlags.SAMPLED, traceState: parent?.traceState }, parent, { ...ATTRIBUTES }, [...links], { resource, instrumentationScope: { name: 'plant-store' }, limits })
  const started = provider.getTracer('plant-store').startSpan('POST /plants', { kind: SpanKind.SERVER, links, startTime: ours.start }, parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent))
  started.setAttributes(ATTRIBUTES)
  if (status !== undefined) {
    started.setStatus(status)
    ours.status = status
  }
  // How far apart the two ended: a pause between them (GC, a loaded host) is no fault of either.
  const before = performance.now()
  ours.end()
  started.end()
  const between = performance.now() - before
  const [sdk] = exporter.getFinishedSpans()
  return { sdk: sdk!, ours, between }
}

/** What the exporters read of a finished span, but its own ids (the SDK's tracer draws them) and times (below). */
const read = (span: ReadableSpan) => ({
  name: span.name,
  kind: span.kind,
  traceFlags: span.spanContext().traceFlags,
  traceState: span.spanContext().traceState,
  parent: span.parentSpanContext,
  attributes: span.attributes,
  links: span.links,
  events: span.events,
  status: span.status,
  droppedAttributesCount: span.droppedAttributesCount,
  droppedEventsCount: span.droppedEventsCount,
  droppedLinksCount: span.droppedLinksCount,
  ended: span.ended,
  resource: span.resource.attributes,
  scope: { name: span.instrumentationScope.name, version: span.instrumentationScope.version, schemaUrl: span.instrumentationScope.schemaUrl }
})

const CASES: Record<string, Case> = {
  'a request in its caller\'s trace, failed, linked to its commit': { limits: DEFAULTS, parent: CALLER, links: linksTo(1), status: { code: SpanStatusCode.ERROR } },
  'a group commit, a root with many links': { limits: DEFAULTS, links: linksTo(200) },
  'attributes past the count limit, strings past the length limit, links past theirs': { limits: { attributeCountLimit: 3, attributeValueLengthLimit: 4, linkCountLimit: 2 }, links: linksTo(5) },
  'no attribute and no link allowed': { limits: { attributeCountLimit: 0, attributeValueLengthLimit: Infinity, linkCountLimit: 0 }, links: linksTo(3) },
  'a length limit that is not positive: none': { limits: { attributeCountLimit: 128, attributeValueLengthLimit: 0, linkCountLimit: 128 } }
}

for (const [name, testCase] of Object.entries(CASES)) {
  t.test(name, async (t) => {
    const { sdk, ours, between } = both(testCase)
    t.same(read(ours), read(sdk), 'as the SDK would have made it')
    // Both read the same clock (performance.now(), set to Date.now()'s), each at its own instant.
    t.ok(Math.abs(hrTimeToMilliseconds(ours.startTime) - hrTimeToMilliseconds(sdk.startTime)) < 5, 'the same start')
    // Ours ended first; the SDK's within `between` after, up to Date.now()'s millisecond either side.
    const endGap = hrTimeToMilliseconds(sdk.endTime) - hrTimeToMilliseconds(ours.endTime)
    t.ok(endGap > -2 && endGap < between + 2, 'the same end')
    t.ok(Math.abs(hrTimeToMilliseconds(ours.startTime) - Date.now()) < 1000, 'in epoch time')
    t.ok(Math.abs(hrTimeToMilliseconds(ours.duration) - (hrTimeToMilliseconds(ours.endTime) - hrTimeToMilliseconds(ours.startTime))) < 0.001, 'its duration: end minus start')
  })
}
