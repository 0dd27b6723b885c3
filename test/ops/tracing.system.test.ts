import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT_CONTEXT } from '@opentelemetry/api'
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace'
import t from 'tap'
import { startReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts'
import { freshDatabaseUrl } from '../helpers/postgres.ts'
import { SECRET_NAME, TOKEN, tracedService } from '../helpers/traced-service.ts'

// Traces, as an operator whose platform collects OpenTelemetry gets them: the service as a real
// process, configured by the SDK's own OTEL_* variables, exporting over OTLP/HTTP to a receiver
// the test runs. Tracing off loads no OpenTelemetry module: test/service/footprint.system.test.ts;
// a collector down or hung: test/ops/tracing-collector.system.test.ts.

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER = '00f067aa0ba902b7'

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name)
/** The parts a request span tells of, in order, each by its outcome, each with its time. */
const parts = (span: ReceivedSpan) => ['auth', 'validation']
  .filter((part) => typeof span.attributes[`plant_store.${part}.duration_ms`] === 'number')
  .map((part) => span.attributes[`plant_store.${part}.outcome`])
  .join()
/** Every span as one text, to search for what no span may hold. */
const asText = (spans: ReceivedSpan[]) => JSON.stringify(spans, (_key, value) => typeof value === 'bigint' ? String(value) : value)

t.test('a create with a traceparent continues the caller\'s trace, down to the group commit', async (t) => {
  const receiver = await startReceiver(t)
  const { create, accessLines } = await tracedService(t, receiver)
  t.equal((await create({ traceparent: `00-${TRACE}-${CALLER}-01` })).status, 200)
  const mine = () => receiver.spans.filter((span) => span.traceId === TRACE)
  await receiver.waitFor(() => mine().length >= 1 && receiver.spans.some((span) => span.name === 'group commit'), 'the create\'s span and its commit')

  t.same(mine().map((span) => span.name), ['POST /plants'], 'one span for the request, its parts timed on it')
  const [request] = mine()
  t.equal(request.parentSpanId, CALLER, 'its parent is the caller\'s span')
  t.equal(request.kind, 2, 'a server span')
  t.match(request.attributes, { 'http.request.method': 'POST', 'http.route': '/plants', 'url.path': '/plants', 'http.response.status_code': 200 })
  t.equal(request.resource['service.name'], 'plant-store', 'the default service name')
  t.match(request.resource, { 'host.name': String, 'process.pid': Number, 'telemetry.sdk.language': 'nodejs' }, 'and what every resource detector found')
  t.match(request.attributes, { 'plant_store.auth.outcome': 'accepted', 'plant_store.auth.token_kind': 'static', 'plant_store.validation.outcome': 'valid' })
  t.same(request.events, [], 'its parts are attributes, not events')
  // Where its time went: the guard, validation, then the handler to the span's end.
  const guard = request.attributes['plant_store.auth.duration_ms'] as number
  const validation = request.attributes['plant_store.validation.duration_ms'] as number
  const spanMs = Number(request.endTimeUnixNano - request.startTimeUnixNano) / 1e6
  t.ok(guard > 0 && validation > 0, `the guard and validation timed: ${guard} ms, ${validation} ms`)
  t.ok(guard + validation < spanMs, `within the span's ${spanMs} ms`)

  const commit = receiver.spans.find((span) => span.name === 'group commit' && span.links.some((link) => link.spanId === request.spanId))
  t.ok(commit, 'the commit span links to the create it held')
  t.same(commit!.links.find((link) => link.spanId === request.spanId), { traceId: TRACE, spanId: request.spanId }, 'in the request\'s trace')
  t.match(commit!.attributes, { 'db.system.name': 'sqlite', 'plant_store.batch.size': 1, 'plant_store.batch.created': 1, 'plant_store.batch.replayed': 0, 'plant_store.batch.conflict': 0, 'plant_store.batch.failed': 0 })
  t.same(request.links, [{ traceId: commit!.traceId, spanId: commit!.spanId }], 'and the create links back to its commit')
  t.ok(commit!.endTimeUnixNano <= request.endTimeUnixNano, 'the commit ends before the request does')

  const line = (await accessLines(1)).find((l) => l.trace_id === TRACE)
  t.ok(line, 'the access line carries the trace id')
  t.equal(line.span_id, request.spanId, 'and the request span\'s id')
})

t.test('without a traceparent a new trace starts; sampled out, nothing is exported and the line has no trace id', async (t) => {
  const receiver = await startReceiver(t)
  const { create, accessLines } = await tracedService(t, receiver)
  await create()
  await receiver.waitFor(() => byName(receiver.spans, 'POST /plants').length === 1, 'a request span')
  const [request] = byName(receiver.spans, 'POST /plants')
  t.equal(request.parentSpanId, '', 'a root span')
  t.not(request.traceId, TRACE)
  t.equal((await accessLines(1))[0].trace_id, request.traceId)

  const unsampled = '0af7651916cd43dd8448eb211c80319c'
  await create({ traceparent: `00-${unsampled}-b7ad6b7169203331-00` })
  await create()
  await receiver.waitFor(() => byName(receiver.spans, 'POST /plants').length === 2, 'the next sampled request')
  await sleep(300)
  t.equal(receiver.spans.filter((span) => span.traceId === unsampled).length, 0, 'no span of a trace the caller sampled out')
  t.equal(receiver.spans.filter((span) => span.name === 'group commit').length, 2, 'nor a commit span for its create')
  const line = (await accessLines(2))[1]
  t.equal(line.statusCode, 200)
  t.notOk('trace_id' in line || 'span_id' in line, 'its access line has no trace id')
})

t.test('a ratio sampler decides once, as the request arrives: a request is traced whole, or not at all', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })
  const REQUESTS = 200
  for (let i = 0; i < REQUESTS; i++) t.equal((await create()).status, 200)
  // The batch processor exports every 100 ms; after a quiet second, all that was kept is in.
  await sleep(1000)
  const kept = byName(receiver.spans, 'POST /plants')
  // Binomial(200, 0.5): 70 to 130 is 4 standard deviations each way. Decided twice, by the hook
  // and again by the SDK, a quarter would be kept (50, and 70 is 3 away).
  t.ok(kept.length >= 70 && kept.length <= 130, `about half kept: ${kept.length} of ${REQUESTS}`)
  t.ok(kept.every((span) => parts(span) === 'accepted,valid'), 'each kept request whole, its guard and validation on it')
  t.same(receiver.spans.filter((span) => span.name !== 'group commit' && span.name !== 'POST /plants'), [], 'no other span')
  // The trace id a ratio sampler judges is the one the trace gets: the SDK's own sampler keeps
  // every id kept (judged on one id and traced on another, half would be ids it drops).
  const ratio = new TraceIdRatioBasedSampler(0.5)
  const dropped = kept.filter((span) => ratio.shouldSample(ROOT_CONTEXT, span.traceId).decision !== SamplingDecision.RECORD_AND_SAMPLED)
  t.same(dropped.map((span) => span.traceId), [], 'each kept trace\'s id is one the ratio keeps')
  const linked = new Set(byName(receiver.spans, 'group commit').flatMap((commit) => commit.links.map((link) => link.traceId)))
  t.same([...linked].sort(), kept.map((span) => span.traceId).sort(), 'the commits link to the kept creates, and only to them')
})

t.test('rejections are error spans, cheap ones; no attribute holds a token, its hash or the body', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver)
  t.equal((await create({ authorization: 'Bearer not-the-token-0123456789' })).status, 401)
  t.equal((await create({}, `{"id":"one","name":"${SECRET_NAME}"}`)).status, 400)
  t.equal((await create()).status, 200)
  await receiver.waitFor(() => byName(receiver.spans, 'POST /plants').length === 3 && byName(receiver.spans, 'group commit').length === 1, 'three requests and a commit')
  const requests = byName(receiver.spans, 'POST /plants')
  const status = (code: number) => requests.find((span) => span.attributes['http.response.status_code'] === code)!
  t.equal(status(401).status, 2, '401: error status')
  t.equal(status(401).attributes['error.type'], '401')
  t.equal(status(400).status, 2, '400: error status')
  t.same(receiver.spans.filter((span) => span.traceId === status(401).traceId).map((span) => span.name), ['POST /plants'], 'a 401 is the request alone')
  t.equal(parts(status(401)), 'invalid', 'its guard, and nothing after it')
  t.match(status(401).attributes, { 'plant_store.auth.token_kind': 'unknown' })
  t.equal(parts(status(400)), 'accepted,invalid', 'validation fails with the 400')
  t.equal(status(400).attributes['error.type'], '400')

  const everything = asText(receiver.spans)
  const hash = createHash('sha256').update(TOKEN).digest('base64url')
  for (const secret of [TOKEN, 'not-the-token-0123456789', hash, hash.slice(0, 12), SECRET_NAME]) {
    t.notOk(everything.includes(secret), `no span holds ${secret === SECRET_NAME ? 'the body' : 'a token or its hash'}`)
  }
})

t.test('a request past its rate limit is its guard\'s refusal, not its body\'s', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, { RATE_LIMIT_PER_MINUTE: '1' })
  t.equal((await create()).status, 200)
  t.equal((await create()).status, 429)
  await receiver.waitFor(() => byName(receiver.spans, 'POST /plants').length === 2, 'both requests')
  const limited = byName(receiver.spans, 'POST /plants').find((span) => span.attributes['http.response.status_code'] === 429)!
  t.equal(parts(limited), 'rate_limited', 'the guard\'s outcome alone')
  t.match(limited.attributes, { 'plant_store.auth.token_kind': 'static' })
  t.equal(limited.status, 2, 'an error span')
})

t.test('with PostgreSQL, the statements are spans under the commit span', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, { DATABASE_URL: await freshDatabaseUrl() })
  t.equal((await create()).status, 200)
  await receiver.waitFor(() => receiver.spans.some((span) => span.name === 'group commit') && receiver.spans.some((span) => span.name.startsWith('pg.query')), 'the commit and its statements')
  const commit = byName(receiver.spans, 'group commit')[0]
  t.equal(commit.attributes['db.system.name'], 'postgresql')
  const statements = receiver.spans.filter((span) => span.parentSpanId === commit.spanId && span.name.startsWith('pg.query'))
  t.ok(statements.length >= 1, `the commit's statements: ${statements.map((s) => s.name).join(', ')}`)
  t.match(statements[0].attributes, { 'db.system.name': 'postgresql' })
  t.notOk(asText(receiver.spans).includes(SECRET_NAME), 'no statement span holds a plant\'s name (the values are not recorded)')
})

t.test('the default protocol, OTLP/HTTP protobuf, carries the trace', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, { OTEL_EXPORTER_OTLP_PROTOCOL: '' })
  await create({ traceparent: `00-${TRACE}-${CALLER}-01` })
  await receiver.waitFor(() => receiver.protobuf.some((body) => body.includes(Buffer.from(TRACE, 'hex'))), 'a protobuf export holding the trace id')
  t.pass('exported as protobuf')
})

t.test('unless OTEL_BSP_SCHEDULE_DELAY says otherwise, a span is exported within a fraction of a second, not the SDK\'s 5 s', async (t) => {
  const receiver = await startReceiver(t)
  // '' is unset to the SDK: the service's own delay, not the helper's.
  const { create } = await tracedService(t, receiver, { OTEL_BSP_SCHEDULE_DELAY: '' })
  const sent = performance.now()
  await create({ traceparent: `00-${TRACE}-${CALLER}-01` })
  await receiver.waitFor(() => receiver.spans.some((span) => span.traceId === TRACE), 'the create\'s span', 2500)
  t.pass(`exported ${(performance.now() - sent).toFixed(0)} ms after the create was sent`)
})

t.test('OTEL_PROPAGATORS, OTEL_RESOURCE_ATTRIBUTES, OTEL_NODE_RESOURCE_DETECTORS and the span limits are read as the SDK documents them', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, {
    OTEL_PROPAGATORS: 'b3,tracecontext',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging',
    OTEL_NODE_RESOURCE_DETECTORS: 'env,process',
    OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '3'
  })
  await create({ b3: `${TRACE}-${CALLER}-1` })
  await receiver.waitFor(() => receiver.spans.some((span) => span.traceId === TRACE), 'the span of the trace the b3 header named')
  const request = receiver.spans.find((span) => span.traceId === TRACE)!
  t.equal(request.parentSpanId, CALLER, 'b3: its parent is the caller\'s span')
  t.match(request.resource, { 'deployment.environment.name': 'staging', 'service.name': 'plant-store', 'process.pid': Number }, 'the resource: the attributes named, and the process detector\'s')
  t.notOk('host.name' in request.resource, 'not the host detector, not named')
  t.equal(Object.keys(request.attributes).length, 3, 'no more attributes than the limit')
})

t.test('a kept span carries what the SDK\'s spans carry: the caller\'s trace state, the service\'s scope, and the limits\' cuts, counted', async (t) => {
  const receiver = await startReceiver(t)
  const { create } = await tracedService(t, receiver, { OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '4', OTEL_SPAN_LINK_COUNT_LIMIT: '0' })
  await create({ traceparent: `00-${TRACE}-${CALLER}-01`, tracestate: 'vendor=value,other=x' })
  await receiver.waitFor(() => receiver.spans.some((span) => span.traceId === TRACE) && byName(receiver.spans, 'group commit').length > 0, 'the create\'s span and its commit\'s')
  const request = receiver.spans.find((span) => span.traceId === TRACE)!
  t.equal(request.traceState, 'vendor=value,other=x', 'the caller\'s trace state, in the span\'s own ids')
  t.equal(request.scope, 'plant-store', 'the service\'s instrumentation scope')
  t.match(request.attributes, { 'http.request.method': 'POST', 'url.path': '/pla', 'http.route': '/pla', 'plant_store.auth.outcome': 'acce' }, 'strings cut at the length limit, numbers kept')
  t.equal(request.attributes['http.response.status_code'], 200)
  t.same(request.links, [], 'no link past the link limit')
  t.equal(request.droppedLinksCount, 1, 'its commit\'s link, dropped and counted')
  const commit = byName(receiver.spans, 'group commit')[0]!
  t.equal(commit.traceState, '', 'a commit starts a trace of its own, with no state')
  t.ok(commit.droppedLinksCount >= 1, `the commit's links to its creates, dropped and counted: ${commit.droppedLinksCount}`)
})

t.test('OTEL_TRACES_EXPORTER=console writes each kept span to stdout, as the SDK\'s console exporter prints it', async (t) => {
  const { server, create } = await tracedService(t, 'http://127.0.0.1:9', { OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_ENDPOINT: '' })
  await create({ traceparent: `00-${TRACE}-${CALLER}-01` })
  // The request's span, printed after its commit's (which ends first).
  const request = () => server.output().stdout.split('\n{\n').find((printed) => printed.includes("name: 'POST /plants'"))
  for (const began = Date.now(); request() === undefined && Date.now() - began < 10_000;) await sleep(50)
  const printed = request() ?? ''
  t.match(printed, `traceId: '${TRACE}'`, 'the create\'s span, in the caller\'s trace')
  t.match(printed, `spanId: '${CALLER}'`, 'under the caller\'s span')
  t.match(printed, /duration: \d+(\.\d+)?,/, 'its duration, in µs')
  t.match(printed, "'plant_store.validation.outcome': 'valid'", 'with its attributes')
  t.match(printed, "instrumentationScope: { name: 'plant-store'", 'in the service\'s scope')
})
