import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import { builtBundle } from '../helpers/bundle.ts'
import { freePort } from '../helpers/ports.ts'
import { AUDIENCE, startProvider } from '../helpers/identity-provider.ts'
import { startReceiver } from '../helpers/otlp-receiver.ts'
import { startRedis } from '../helpers/redis.ts'
import { secretDir } from '../helpers/secret-volume.ts'
import { dashboardQueries, needsPrometheus, startPrometheus } from '../helpers/prometheus.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// The rules and the dashboard of deploy/monitoring/ against a real Prometheus, scraping the service
// (the bundle, as npm start runs it) every half second with the docs' own scrape config, and
// evaluating the rules as often. Under a light load no alert is pending or firing (but one on the host's own speed whose figures held); creates shed by a tiny
// MAX_PENDING_CREATES make the error-budget alert pending; every dashboard query returns data,
// quiet (no 503 yet, no JWT yet: its counts read 0, not "No data") and under load; killed, the service's down alerts turn pending. The deadlines
// bound a hang, with room for a host several times slower; no step is judged by how long it took.

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'monitoring-test-token-0123456789abcdef'
// How often Prometheus scrapes and evaluates here.
const INTERVAL_MS = 500
// A deadline for what takes Prometheus a scrape and an evaluation here.
const SECONDS_OF_PROMETHEUS = 60_000
// Long enough for the rules to be evaluated a dozen times over the light load.
const LIGHT_LOAD_MS = 15 * INTERVAL_MS
// Enough concurrent creates to keep more than MAX_PENDING_CREATES waiting for a commit.
const SHEDDING_CLIENTS = 64
const MAX_PENDING_CREATES = 8
const RULES = join(root, 'deploy/monitoring/rules.yaml')
// Alerts on the host's own speed: a busy host can make them true under a light load too (a commit's
// fsync past 100 ms). Such an alert may be pending then, but only when the figures it reads held.
const HOST_SPEED = new Set(['PlantStoreCommitsSlow', 'PlantStoreLatencyBudgetBurn', 'PlantStoreEventLoopLagging'])

/** The scrape config docs/operating.md gives operators, for the job the rules select. */
function docsScrapeConfig (): Record<string, any> {
  const blocks = [...readFileSync(join(root, 'docs/operating.md'), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map(([, text]) => text)
  const block = blocks.find((text) => text.includes('job_name: plant-store'))
  if (block === undefined) throw new Error('docs/operating.md has no scrape config for job plant-store')
  return parseAllDocuments(block)[0].toJS()
}

t.test('the rules and the dashboard against a real Prometheus scraping the service', needsPrometheus, async (t) => {
  const [script, provider, receiver, metricsPort, redis] = await Promise.all([builtBundle(), startProvider(t), startReceiver(t), freePort(), startRedis(t)])
  // Every feature the dashboard draws on: the tokens from a file, limits counted in Redis, JWTs, traces.
  const tokensFile = join(secretDir(t), 'api-tokens')
  writeFileSync(tokensFile, `${TOKEN}\n`, { mode: 0o600 })
  const server = startServer(t, {
    API_TOKENS_FILE: tokensFile,
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_REDIS_URL: redis.url,
    DATABASE_URL: `sqlite:${join(t.testdir(), 'plants.db')}`,
    LOG_LEVEL: 'error',
    METRICS_PORT: String(metricsPort),
    MAX_PENDING_CREATES: String(MAX_PENDING_CREATES),
    JWT_ISSUER: provider.issuer,
    JWT_AUDIENCE: AUDIENCE,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.01'
  }, undefined, [], script)
  const { url } = await server.listening
  const jwt = await provider.mint({ claims: { scope: 'plants:write' } })

  // The docs' config as it is, but every half second and on the test's port.
  const config = docsScrapeConfig()
  const [job] = config.scrape_configs
  t.equal(job.job_name, 'plant-store')
  const prometheus = await startPrometheus(t, {
    global: { scrape_interval: `${INTERVAL_MS}ms`, evaluation_interval: `${INTERVAL_MS}ms` },
    rule_files: [RULES],
    scrape_configs: [{ ...job, scrape_interval: `${INTERVAL_MS}ms`, static_configs: [{ targets: [`127.0.0.1:${metricsPort}`] }] }]
  })
  await prometheus.until('up{job="plant-store"} == 1', SECONDS_OF_PROMETHEUS)

  let id = 0
  const statuses: Record<number, number> = {}
  /** One client's creates, one after the other, until `stop` says so; with `jwts`, every tenth with the provider's token. */
  const client = async (stop: () => boolean, jwts = true) => {
    while (!stop()) {
      id++
      const response = await postPlant(url, jwts && id % 10 === 0 ? jwt : TOKEN, `{"id":${id},"name":"plant ${id}"}`)
      await response.arrayBuffer()
      statuses[response.status] = (statuses[response.status] ?? 0) + 1
    }
  }

  // A light load: one client. Some rules read nothing before a scrape has been made, so the window
  // starts two evaluations after the first scrape.
  const lightFrom = (Date.now() + 2 * INTERVAL_MS) / 1000
  const lightEnds = Date.now() + LIGHT_LOAD_MS
  await client(() => Date.now() > lightEnds, false)
  const lightTo = Date.now() / 1000
  t.same(Object.keys(statuses), ['200'], `${statuses[200]} creates, all answered 200`)
  const seconds = Math.floor(lightTo - lightFrom)
  const alerts = new Set((await prometheus.query(`max_over_time(ALERTS[${seconds}s])`, lightTo)).map(({ metric }) => `${metric.alertname} ${metric.alertstate}`))
  // What held: each host-speed rule's own expression, at every scrape's figures over the window.
  const held = new Set<string>()
  for (const { alert, expr } of parse(readFileSync(RULES, 'utf8')).groups.flatMap((group: any) => group.rules)) {
    if (HOST_SPEED.has(alert) && (await prometheus.query(`max_over_time((${expr})[${seconds}s:${INTERVAL_MS / 5}ms])`, lightTo)).length > 0) held.add(`${alert} pending`)
  }
  t.same([...alerts].filter((alert) => !held.has(alert)), [], `over ${seconds} s of light load, no alert was pending or firing${held.size > 0 ? ` but what this host made true: ${[...held].join(', ')}` : ''}`)
  t.ok((await prometheus.query('plant_store:api_errors:ratio_rate5m{job="plant-store"} == 0')).length === 1, 'the error ratio was computed, and is 0')
  const dashboard = async (when: string) => {
    // Grafana escapes a chosen value's regex characters, doubling the backslash inside PromQL's string.
    for (const { panel, expr } of dashboardQueries({ $__rate_interval: '10s', $instance: `127\\\\.0\\\\.0\\\\.1:${metricsPort}` })) {
      t.ok((await prometheus.query(expr)).length > 0, `${when}: ${panel}: ${expr}`)
    }
  }
  await dashboard('quiet')

  // Shedding: more creates at once than may wait, so the rest are refused with 503.
  let shedding = true
  const load = Promise.all(Array.from({ length: SHEDDING_CLIENTS }, async () => await client(() => !shedding)))
  t.teardown(() => { shedding = false })
  const burn = await prometheus.until('ALERTS{alertname="PlantStoreErrorBudgetBurn", alertstate="pending", long="1h"}', SECONDS_OF_PROMETHEUS)
  t.pass(`the error-budget alert (1 h and 5 min) was pending ${burn.toFixed(1)} s after the shedding began`)
  const busy = await prometheus.query('sum(plant_store_unavailable_total{job="plant-store", route="/plants", reason="store_busy"})')
  t.ok(Number(busy[0]?.value[1]) > 0, `Prometheus counted ${busy[0]?.value[1]} creates refused with store_busy`)

  // Every query of the dashboard, as Grafana would send it with every instance chosen, under load.
  t.same(await prometheus.labelValues('instance', 'up{job="plant-store"}'), [`127.0.0.1:${metricsPort}`], 'the instance variable\'s values')
  await dashboard('under load')
  shedding = false
  await load
  t.ok(statuses[503] > 0, `the shedding load was answered ${JSON.stringify(statuses)}`)

  // Killed: the service's scrapes fail, and the down alerts turn pending.
  server.child.kill('SIGKILL')
  await server.exited
  const down = await prometheus.until('ALERTS{alertname="PlantStoreDown", alertstate="pending"}', SECONDS_OF_PROMETHEUS)
  t.pass(`PlantStoreDown was pending ${down.toFixed(1)} s after the kill`)
  const instanceDown = await prometheus.until('ALERTS{alertname="PlantStoreInstanceDown", alertstate="pending"}', SECONDS_OF_PROMETHEUS)
  t.pass(`PlantStoreInstanceDown was pending ${instanceDown.toFixed(1)} s after PlantStoreDown`)
})
