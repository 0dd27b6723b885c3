import { totalmem } from 'node:os'
import { getHeapStatistics } from 'node:v8'
import t from 'tap'
import { freePort } from '../helpers/ports.ts'
import { buildTestApp, testConfig, TOKEN } from '../helpers/app.ts'
import { AUDIENCE, startProvider } from '../helpers/identity-provider.ts'
import { postPlant } from '../helpers/server-process.ts'

// Prometheus metrics on a listener of their own: exact counts after a known mix of answers.

/** The samples of a Prometheus text exposition, keyed by name and labels as written. */
function samples (text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

t.test('a scrape after a known mix of 200, 401, 404 and 409 answers', async (t) => {
  const metricsPort = await freePort()
  const app = await buildTestApp(t, await testConfig(t, { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' }))
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal(app.metricsUrl, `http://127.0.0.1:${metricsPort}/metrics`)

  const statuses: number[] = []
  const create = async (body: string, token = TOKEN) => {
    const res = await postPlant(base, token, body)
    statuses.push(res.status)
    await res.arrayBuffer()
  }
  // Together, so the store commits them as batches.
  await Promise.all([1, 2, 3, 4].map((id) => create(`{"id":${id},"name":"Fern"}`)))
  await create('{"id":1,"name":"Fern"}') // replay
  await create('{"id":2,"name":"Ivy"}') // conflict
  await create('{"id":3,"name":"Ivy"}') // conflict
  for (let i = 0; i < 3; i++) await create('{"id":9,"name":"Fern"}', 'not-the-token-0123456789')
  await (await fetch(`${base}/nowhere/${Math.random()}`)).arrayBuffer()
  t.same(statuses.sort(), [200, 200, 200, 200, 200, 401, 401, 401, 409, 409])

  const scrape = await fetch(app.metricsUrl!)
  t.equal(scrape.status, 200)
  t.match(scrape.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const text = await scrape.text()
  const got = samples(text)
  const requests = (route: string, method: string, status: number) => got.get(`http_request_duration_seconds_count{method="${method}",route="${route}",status_code="${status}"}`)
  t.equal(requests('/plants', 'POST', 200), 5, 'five 200s')
  t.equal(requests('/plants', 'POST', 401), 3, 'three 401s, rejected before any handler')
  t.equal(requests('/plants', 'POST', 409), 2, 'two 409s')
  t.equal(requests('unmatched', 'GET', 404), 1, 'a 404 under one label, never its raw URL')
  t.notMatch(text, '/nowhere', 'no raw URL in the labels')
  t.ok(got.get('http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/plants",status_code="200"}') === 5, 'histogram buckets')

  t.equal(got.get('plant_store_creates_total{outcome="created"}'), 4)
  t.equal(got.get('plant_store_creates_total{outcome="replayed"}'), 1)
  t.equal(got.get('plant_store_creates_total{outcome="conflict"}'), 2)
  const commits = got.get('plant_store_commit_duration_seconds_count')!
  t.ok(commits >= 1 && commits <= 7, `${commits} commits, one observation each`)
  t.equal(got.get('plant_store_batch_size_count'), commits, 'one batch size per commit')
  t.equal(got.get('plant_store_batch_size_sum'), 7, 'every create that reached the store is in a batch')
  t.ok(got.get('plant_store_commit_duration_seconds_sum')! > 0)

  for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total']) {
    t.ok(got.has(name), `${name} is exported`)
  }
  t.match(text, /^# TYPE nodejs_gc_duration_seconds histogram$/m, 'GC durations are exported')

  const reasons = ['store_busy', 'store_timeout', 'store_unavailable', 'shutting_down', 'overloaded']
  t.same(reasons.map((reason) => got.get(`plant_store_unavailable_total{route="/plants",reason="${reason}"}`)), reasons.map(() => 0), 'no 503 yet: each reason the route may have is 0, not absent')
  t.equal(got.get('plant_store_unavailable_total{route="/readyz",reason="store_unavailable"}'), 0, 'and the readiness probe\'s')
  t.notOk([...got.keys()].some((key) => key.includes('keys_unavailable') || key.startsWith('plant_store_jwt_total')), 'nothing of JWTs, which are off')

  t.equal((await fetch(`${base}/metrics`)).status, 404, 'never on the API port')
  const other = await fetch(`http://127.0.0.1:${metricsPort}/other`)
  t.equal(other.status, 404)
  t.same(await other.json(), { error: 404, message: 'Not found: the metrics are at GET /metrics' })

  await app.close()
  await t.rejects(fetch(app.metricsUrl!), 'the listener closes with the service')
})

t.test('503s are counted by route and reason, beside the limits they are refused at', async (t) => {
  const app = await buildTestApp(t, await testConfig(t, { METRICS_PORT: '0', MAX_PENDING_CREATES: '1', MAX_EVENT_LOOP_DELAY_MS: '750' }))
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  // Together, so that all but the first find a create already waiting.
  const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const res = await postPlant(base, TOKEN, `{"id":${i},"name":"Fern"}`)
    await res.arrayBuffer()
    return res.status
  }))
  const refused = statuses.filter((status) => status === 503).length
  t.ok(refused > 0 && refused < 20, `${refused} of 20 refused with 503`)
  const got = samples(await (await fetch(app.metricsUrl!)).text())
  t.equal(got.get('plant_store_unavailable_total{route="/plants",reason="store_busy"}'), refused, 'each counted as store_busy, on its route')
  t.equal(got.get('plant_store_pending_creates_limit'), 1, 'MAX_PENDING_CREATES')
  t.equal(got.get('plant_store_event_loop_delay_limit_seconds'), 0.75, 'MAX_EVENT_LOOP_DELAY_MS, in seconds')
  t.ok(got.get('plant_store_memory_limit_bytes')! > 0 && got.get('plant_store_memory_limit_bytes')! <= totalmem(), 'the memory limit: the cgroup\'s or the machine\'s')
  t.equal(got.get('plant_store_heap_limit_bytes'), getHeapStatistics().heap_size_limit, 'V8\'s heap limit')
  t.notOk([...got.keys()].some((key) => key.startsWith('plant_store_trace_spans_lost_total')), 'no lost-span count with traces off')
})

t.test('with an identity provider, each token outcome and key fetch is counted from 0', async (t) => {
  const provider = await startProvider(t)
  const app = await buildTestApp(t, await testConfig(t, { METRICS_PORT: '0', JWT_ISSUER: provider.issuer, JWT_AUDIENCE: AUDIENCE, MAX_EVENT_LOOP_DELAY_MS: '0' }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const got = samples(await (await fetch(app.metricsUrl!)).text())
  const outcomes = ['accepted', 'insufficient_scope', 'unavailable', 'oversize', 'malformed', 'disallowed_algorithm', 'unknown_key', 'bad_signature', 'expired', 'not_yet_valid', 'bad_claims']
  t.same(outcomes.map((outcome) => got.get(`plant_store_jwt_total{outcome="${outcome}"}`)), outcomes.map(() => 0), 'every outcome, 0 before the first token')
  for (const document of ['discovery', 'jwks']) t.ok(got.has(`plant_store_jwks_fetches_total{document="${document}",result="failed"}`), `${document} fetches that failed: counted, though none did`)
  t.equal(got.get('plant_store_unavailable_total{route="/plants",reason="keys_unavailable"}'), 0, 'the keys\' 503s too')
  t.notOk(got.has('plant_store_unavailable_total{route="/plants",reason="overloaded"}'), 'not shedding\'s, which is off')
})

t.test('METRICS_HOST sets the address the listener binds', async (t) => {
  const metricsPort = await freePort()
  const app = await buildTestApp(t, await testConfig(t, { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.2' }))
  t.equal(app.metricsUrl, `http://127.0.0.2:${metricsPort}/metrics`)
  t.equal((await fetch(`http://127.0.0.2:${metricsPort}/metrics`)).status, 200)
  await t.rejects(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 'nothing on another address')
})

t.test('unset, there is no listener and nothing is measured', async (t) => {
  const app = await buildTestApp(t)
  t.equal(app.metricsUrl, undefined)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await fetch(`${base}/metrics`)).status, 404)
})
