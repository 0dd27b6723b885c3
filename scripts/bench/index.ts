// npm run bench: performance figures, never part of npm test. Loopback only, five rounds (at three, a full run took about a quarter of an hour).
// Each server runs alone on core 0; wrk (and PostgreSQL) on the other cores. The headline is the
// server's own CPU time per request, which a load generator that cannot keep up does not skew.
//   BENCH_ROUNDS (5)    rounds, each running every variant back to back, so drift hits all alike
//   BENCH_SECONDS (3)   seconds per measurement, after a warm-up
//   BENCH_PG (1)        0 skips the PostgreSQL sections
//   BENCH_BEFORE        a git ref: the http, traces, footprint, slow-disk and hostile sections run that commit's code too
//   BENCH_ONLY          some sections, comma-separated: http, traces, footprint, jwt, shared-limits, slow-disk, postgres, recovery, copy, json, mock, proxy, hostile
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEmbeddedPostgres, type EmbeddedServer } from '../../test/helpers/embedded-postgres.ts'
import { freePort } from '../../test/helpers/ports.ts'
import { findPgbouncer, startPgbouncer } from '../../test/helpers/pgbouncer.ts'
import { childrenOf } from '../../test/helpers/proc.ts'
import { benchCopy } from './copy.ts'
import { benchJsonParse } from './json.ts'
import { benchHostile } from './hostile.ts'
import { benchJwt } from './jwt.ts'
import { benchMock, benchMockReads } from './mock.ts'
import { benchProxy } from './proxy.ts'
import { benchRecovery } from './recovery.ts'
import { benchSharedLimits } from './shared-limits.ts'
import { benchSlowDisk } from './slow-disk.ts'
import { benchTraces } from './traces.ts'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'
import { buildRef, coreBusy, CPUS, cpuSeconds, fmt, measure, measureLoad, median, peakRssMiB, root, runLoad, spread, startServer, stopServer, warmUp as warmUpLoads, type Measured, type Server } from './measure.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const CONNECTIONS = 100
const STARTS = 7
const POOL_SIZES = [2, 10, 32]
const TOKEN = 'bench-token-0123456789abcdef'
const RESULTS = join(root, 'scripts/bench/results.md')
const dir = join(tmpdir(), `plant-store-bench-${randomUUID()}`)

const body = (id: number): string => `{"id":${id},"name":"Boston fern","tag":"indoor"}`
let nextId = 1
/** A fresh block of ids for a load that creates plants. */
const freshIds = (): number => { nextId += 1e9; return nextId }

interface Scenario { token: boolean, body?: string, status: number, baselineStatus: number }
const SCENARIOS: Record<string, Scenario> = {
  'valid creates (200)': { token: true, status: 200, baselineStatus: 200 },
  'invalid body (400)': { token: true, body: '{"id":"one","name":1}', status: 400, baselineStatus: 400 },
  // The baseline has no auth: it answers these as replays of one plant.
  'missing token (401)': { token: false, body: body(0), status: 401, baselineStatus: 200 }
}

const START = nodeCommandOf(root, 'start')
// npm start caps glibc's malloc arenas, for memory; a variant without the cap shows what it costs the CPU.
const { MALLOC_ARENA_MAX: _, ...uncapped } = START.env
const UNCAPPED: NodeCommand = { ...START, env: uncapped }

/**
 * The service as `npm start` runs it (its bundle, with its Node flags, unless `start` names another
 * commit's), on a fresh SQLite file unless `env` names a database; pinned to the server's
 * core unless `cpus` says otherwise.
 */
const service = (env: Record<string, string>, cpus?: string | null, start: NodeCommand = START) => async (name: string): Promise<Server> =>
  await startServer(name, start, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(dir, `${randomUUID()}.db`)}`, ...env }, cpus)
const baseline = async (name: string): Promise<Server> => await startServer(name, { env: {}, args: ['scripts/bench/baseline.ts'] }, {})

spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
// An older commit, built beside this one, to measure a change within one run.
const before = process.env.BENCH_BEFORE === undefined ? undefined : buildRef(process.env.BENCH_BEFORE)
const DEFAULTS = 'service, defaults (LOG_LEVEL=info)'
const WARN = 'service, LOG_LEVEL=warn'
const BEFORE_DEFAULTS = `before (${before?.ref}), defaults`
const BEFORE_WARN = `before (${before?.ref}), LOG_LEVEL=warn`
const METRICS = 'service, LOG_LEVEL=warn, metrics on'
const ARENAS = 'service, LOG_LEVEL=warn, without MALLOC_ARENA_MAX'

const VARIANTS: Record<string, (name: string) => Promise<Server>> = {
  [DEFAULTS]: service({}),
  [WARN]: service({ LOG_LEVEL: 'warn' }),
  ...(before !== undefined && {
    [BEFORE_DEFAULTS]: service({}, undefined, before.start),
    [BEFORE_WARN]: service({ LOG_LEVEL: 'warn' }, undefined, before.start)
  }),
  [METRICS]: service({ LOG_LEVEL: 'warn', METRICS_PORT: '0' }),
  [ARENAS]: service({ LOG_LEVEL: 'warn' }, undefined, UNCAPPED),
  'bare Fastify (logger off)': baseline
}
const BASELINE = 'bare Fastify (logger off)'

/** Checks the answer a scenario expects, once, before loading a server with it. */
async function expectStatus (server: Server, scenario: Scenario, status: number): Promise<void> {
  const res = await fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(scenario.token ? { authorization: `Bearer ${TOKEN}` } : {}) },
    body: scenario.body ?? body(freshIds())
  })
  if (res.status !== status) throw new Error(`${server.name} answered ${res.status}, not ${status}: ${await res.text()}`)
}

const loadOptions = (server: Server, scenario: Scenario, connections = CONNECTIONS) =>
  ({ url: server.url, connections, token: scenario.token ? TOKEN : undefined, body: scenario.body })

/** Every scenario at once, unmeasured: a fresh server's first seconds are spent compiling. */
async function warmUp (server: Server, scenarios: Scenario[]): Promise<void> {
  await warmUpLoads(scenarios.map((scenario) => loadOptions(server, scenario)), freshIds)
}

async function load (server: Server, scenario: Scenario): Promise<Measured> {
  const status = server.name === BASELINE ? scenario.baselineStatus : scenario.status
  await expectStatus(server, scenario, status)
  return await measureLoad(server, loadOptions(server, scenario), SECONDS, freshIds, status)
}

async function benchHttp (): Promise<string> {
  const runs: Record<string, Record<string, Measured[]>> = {}
  for (let round = 1; round <= ROUNDS; round++) {
    // Each round starts every variant afresh and warms it up; then each scenario runs on every
    // variant back to back, in a rotated order. The runs compared are seconds apart, not a minute:
    // this machine's speed drifts by tens of percent from one minute to the next.
    const names = Object.keys(VARIANTS)
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)]
    const servers: Server[] = []
    try {
      for (const name of order) {
        const server = await VARIANTS[name](name)
        servers.push(server)
        process.stderr.write(`round ${round}/${ROUNDS}: ${name}, warming up\n`)
        await warmUp(server, Object.values(SCENARIOS))
      }
      for (const [scenario, spec] of Object.entries(SCENARIOS)) {
        for (const server of servers) {
          process.stderr.write(`round ${round}/${ROUNDS}: ${server.name}, ${scenario}\n`)
          ;((runs[scenario] ??= {})[server.name] ??= []).push(await load(server, spec))
        }
      }
    } finally {
      for (const server of servers) await stopServer(server)
    }
  }

  const cpuOf = (scenario: string, name: string): number => median(runs[scenario][name].map((r) => r.cpuUsPerRequest))
  // Within a round the variants ran back to back: take each round's ratio, then the median.
  const ratio = (scenario: string, name: string, over = BASELINE): string => {
    const ratios = runs[scenario][name].map((r, i) => runs[scenario][over][i].cpuUsPerRequest / r.cpuUsPerRequest)
    return spread(ratios)
  }
  const services = [DEFAULTS, WARN, ...(before === undefined ? [] : [BEFORE_DEFAULTS, BEFORE_WARN])]
  const headline = [
    `| scenario | ${services.map((s) => `${s}: µs/req, ratio to bare`).join(' | ')} | bare Fastify µs/req |`,
    `| --- |${' ---: |'.repeat(services.length + 1)}`,
    ...Object.keys(SCENARIOS).map((scenario) => `| ${scenario} | ${services.map((s) => `${fmt(cpuOf(scenario, s), 1)} µs = **${ratio(scenario, s)}**`).join(' | ')} | ${fmt(cpuOf(scenario, BASELINE), 1)} µs |`)
  ]
  const detail = [
    '| scenario | server | req/s | p50 / p99 ms | p99 ratio to bare | server core busy | wrk cores busy |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |'
  ]
  for (const scenario of Object.keys(SCENARIOS)) {
    for (const name of Object.keys(VARIANTS)) {
      const r = runs[scenario][name]
      const p99 = median(r.map((x) => x.p99Ms))
      detail.push(`| ${scenario} | ${name} | ${fmt(median(r.map((x) => x.requests / x.seconds)))} | ${fmt(median(r.map((x) => x.p50Ms)), 2)} / ${fmt(p99, 2)} | ${fmt(p99 / median(runs[scenario][BASELINE].map((x) => x.p99Ms)), 2)}× | ${coreBusy(r)} | ${fmt(median(r.map((x) => x.loadCpu)), 2)} |`)
    }
  }
  // What a variant costs over another, per request: the median of the rounds' differences and ratios, with their ranges.
  const cost = (without: string, withIt: string): string[] => [
    `| scenario | ${without}: µs/req | ${withIt}: µs/req | difference µs/req, median (range) | ratio, median (range) |`,
    '| --- | ---: | ---: | ---: | ---: |',
    ...Object.keys(SCENARIOS).map((scenario) => {
      const deltas = runs[scenario][withIt].map((r, i) => r.cpuUsPerRequest - runs[scenario][without][i].cpuUsPerRequest)
      const ratios = runs[scenario][withIt].map((r, i) => r.cpuUsPerRequest / runs[scenario][without][i].cpuUsPerRequest)
      return `| ${scenario} | ${fmt(cpuOf(scenario, without), 1)} | ${fmt(cpuOf(scenario, withIt), 1)} | ${fmt(median(deltas), 1)} (${fmt(Math.min(...deltas), 1)} to ${fmt(Math.max(...deltas), 1)}) | ${spread(ratios)} |`
    })
  ]
  return [
    '### HTTP: the service against bare Fastify, server CPU time per request',
    '',
    `Each server alone on core ${CPUS.server}, wrk (${CONNECTIONS} keep-alive connections) on core(s) ${CPUS.load}; ${SECONDS} s per measurement, ${ROUNDS} rounds. The figure is the server process's CPU time (user + system, all threads, from /proc) per answered request, median over rounds; the ratio is bare Fastify's CPU per request over the service's, so higher is better and 1.00× means as cheap as bare Fastify (range over rounds in brackets). The service runs as \`npm start\` runs it on a durable SQLite file (WAL, synchronous=FULL); bare Fastify (scripts/bench/baseline.ts) has no logger, no auth, no schema and an in-memory Map, and having no auth it answers the 401 scenario's requests as replays.`,
    '',
    ...headline,
    '',
    '"Server core busy" is the server\'s CPU seconds per second, the least over rounds: near 1.00 means its core was saturated, so the load generator kept up.',
    '',
    ...detail,
    '',
    '#### Prometheus metrics (METRICS_PORT set) against none, at LOG_LEVEL=warn',
    '',
    ...cost(WARN, METRICS),
    '',
    '#### npm start\'s MALLOC_ARENA_MAX=2 against glibc\'s default arenas, at LOG_LEVEL=warn',
    '',
    ...cost(ARENAS, WARN),
    '',
    ...(before === undefined
      ? []
      : [
          `#### This code against ${before.ref}, at the defaults`, '', ...cost(BEFORE_DEFAULTS, DEFAULTS), '',
          `#### This code against ${before.ref}, at LOG_LEVEL=warn`, '', ...cost(BEFORE_WARN, WARN), ''
        ])
  ].join('\n')
}

/** Start-up to the first answer, and the memory a sustained create load leaves: this code's, and the one before it. */
async function benchFootprint (): Promise<string> {
  const names = before === undefined ? [DEFAULTS] : [DEFAULTS, BEFORE_DEFAULTS]
  const startups: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]))
  // Alternating, so that drift hits both alike.
  for (let i = 0; i < STARTS; i++) {
    for (const name of names) {
      const server = await VARIANTS[name](name)
      startups[name].push(server.startupMs)
      await stopServer(server)
    }
  }
  // Peak memory for those, and for this code without npm start's cap on malloc's arenas.
  const starts: Record<string, NodeCommand> = { [DEFAULTS]: START, ...(before !== undefined && { [BEFORE_DEFAULTS]: before.start }), [ARENAS]: UNCAPPED }
  const peaks: string[] = []
  for (const name of Object.keys(starts)) {
    // Memory as an operator's process holds it: at LOG_LEVEL=warn, on every core, not pinned. Pinned
    // to one core, its worker thread and V8's helpers wait their turn and fewer creates are in
    // flight: the peak reads lower (docs/performance.md, "Start-up and memory").
    const server = await service({ LOG_LEVEL: 'warn' }, null, starts[name])(name)
    try {
      process.stderr.write(`footprint: ${name}, 10 s of creates\n`)
      const run = await runLoad({ url: server.url, connections: CONNECTIONS, seconds: 10, token: TOKEN, firstId: freshIds(), cpus: null })
      peaks.push(`${fmt(peakRssMiB(server.child.pid!), 1)} MiB (${fmt(run.requests)} creates)`)
    } finally {
      await stopServer(server)
    }
  }
  return [
    '### Start-up and memory',
    '',
    `| | ${Object.keys(starts).join(' | ')} |`,
    `| --- |${' ---: |'.repeat(peaks.length)}`,
    `| start-up to first answer, median of ${STARTS} starts | ${names.map((name) => `${fmt(median(startups[name]))} ms`).join(' | ')} | |`,
    `| peak RSS (VmHWM) after 10 s of ${CONNECTIONS}-connection creates, LOG_LEVEL=warn, nothing pinned | ${peaks.join(' | ')} |`,
    ''
  ].join('\n')
}

/** plant_store_batch_size's sum and count, scraped from a service's metrics listener. */
async function batchTotals (port: number): Promise<{ sum: number, count: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0)
  return { sum: value('plant_store_batch_size_sum'), count: value('plant_store_batch_size_count') }
}

/** CPU seconds of a PostgreSQL server: the postmaster and every backend it forked. */
function postgresCpu (pg: EmbeddedServer): number {
  const postmaster = pg.pid()!
  let total = cpuSeconds(postmaster)
  for (const pid of childrenOf(postmaster)) {
    try { total += cpuSeconds(pid) } catch {} // a backend that just exited
  }
  return total
}

async function benchPostgres (): Promise<string> {
  // PostgreSQL is the database machine: it shares the load generator's core(s), not the service's.
  const pg = await startEmbeddedPostgres({ cpus: CPUS.load })
  // Debian's PgBouncer in transaction pooling, on the database's core(s) too.
  const bouncer = await startPgbouncer(findPgbouncer()!, pg.url, CPUS.load)
  const creates = SCENARIOS['valid creates (200)']
  const stores: Record<string, (name: string) => Promise<Server>> = {
    SQLite: service({ LOG_LEVEL: 'warn' }),
    PostgreSQL: service({ LOG_LEVEL: 'warn', DATABASE_URL: pg.url }),
    'PostgreSQL through PgBouncer': service({ LOG_LEVEL: 'warn', DATABASE_URL: bouncer.url })
  }
  const runs: Record<string, Measured[]> = { SQLite: [], PostgreSQL: [], 'PostgreSQL through PgBouncer': [] }
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, start] of Object.entries(stores)) {
        process.stderr.write(`round ${round}/${ROUNDS}: creates on ${name}\n`)
        const server = await start(name)
        try {
          await warmUp(server, [creates])
          runs[name].push(await load(server, creates))
        } finally {
          await stopServer(server)
        }
      }
    }
    const single = [
      '| store | creates/s | service CPU µs/create | p50 / p99 ms | service core busy |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...Object.entries(runs).map(([name, r]) => `| ${name} | ${fmt(median(r.map((x) => x.requests / x.seconds)))} | ${fmt(median(r.map((x) => x.cpuUsPerRequest)), 1)} | ${fmt(median(r.map((x) => x.p50Ms)), 2)} / ${fmt(median(r.map((x) => x.p99Ms)), 2)} | ${coreBusy(r)} |`)
    ]
    const rpsRatios = runs.PostgreSQL.map((r, i) => (r.requests / r.seconds) / (runs.SQLite[i].requests / runs.SQLite[i].seconds))
    const cpuRatios = runs.PostgreSQL.map((r, i) => r.cpuUsPerRequest / runs.SQLite[i].cpuUsPerRequest)
    const pooled = runs['PostgreSQL through PgBouncer']
    const poolerRps = pooled.map((r, i) => (r.requests / r.seconds) / (runs.PostgreSQL[i].requests / runs.PostgreSQL[i].seconds))
    const poolerCpu = pooled.map((r, i) => r.cpuUsPerRequest / runs.PostgreSQL[i].cpuUsPerRequest)

    // Pool sizes: how many batches one instance keeps in flight. Metrics on, to read batch sizes.
    const pools = ['| PG_POOL_SIZE | creates/s | service CPU µs/create | p50 / p99 ms | creates per commit (mean) |', '| ---: | ---: | ---: | ---: | ---: |']
    for (const size of POOL_SIZES) {
      process.stderr.write(`PostgreSQL: pool of ${size}\n`)
      const metricsPort = await freePort()
      const server = await service({ LOG_LEVEL: 'warn', DATABASE_URL: pg.url, PG_POOL_SIZE: String(size), METRICS_PORT: String(metricsPort) })('PostgreSQL')
      try {
        await warmUp(server, [creates])
        const before = await batchTotals(metricsPort)
        const run = await load(server, creates)
        const after = await batchTotals(metricsPort)
        pools.push(`| ${size} | ${fmt(run.requests / run.seconds)} | ${fmt(run.cpuUsPerRequest, 1)} | ${fmt(run.p50Ms, 2)} / ${fmt(run.p99Ms, 2)} | ${fmt((after.sum - before.sum) / (after.count - before.count), 1)} |`)
      } finally {
        await stopServer(server)
      }
    }

    // Several instances against the one database, the load spread evenly over them. Nothing is
    // pinned here: instances, PostgreSQL and wrk share every core, as they would on one box.
    const sweep = ['| instances | creates/s | p99 ms | service CPU (cores) | PostgreSQL CPU (cores) | wrk CPU (cores) |', '| ---: | ---: | ---: | ---: | ---: | ---: |']
    for (const count of [1, 2, 4]) {
      process.stderr.write(`PostgreSQL: ${count} instance(s)\n`)
      const instance = service({ LOG_LEVEL: 'warn', DATABASE_URL: pg.url }, null)
      const instances = await Promise.all(Array.from({ length: count }, async (_, i) => await instance(`instance ${i + 1}`)))
      try {
        const pgBefore = postgresCpu(pg)
        const run = await measure(instances.map((s) => s.child.pid!), instances.map((s) => ({ url: s.url, connections: Math.ceil(CONNECTIONS / count), seconds: SECONDS, token: TOKEN, firstId: freshIds(), cpus: null })))
        const pgCores = (postgresCpu(pg) - pgBefore) / run.seconds
        if (run.non2xx > 0 || run.socketErrors > 0) throw new Error(`${run.non2xx} answers other than 200, ${run.socketErrors} socket errors`)
        sweep.push(`| ${count} | ${fmt(run.requests / run.seconds)} | ${fmt(run.p99Ms, 2)} | ${fmt(run.serverCpu, 2)} | ${fmt(pgCores, 2)} | ${fmt(run.loadCpu, 2)} |`)
      } finally {
        await Promise.all(instances.map(stopServer))
      }
    }
    return [
      '### PostgreSQL: creates beside SQLite, and several instances',
      '',
      `One instance of the service on core ${CPUS.server} at LOG_LEVEL=warn with the default pool, ${CONNECTIONS} connections; PostgreSQL (embedded-postgres, fsync on, synchronous_commit=on) shares core(s) ${CPUS.load} with wrk; ${ROUNDS} rounds, each on SQLite, on PostgreSQL, then on PostgreSQL through PgBouncer.`,
      '',
      ...single,
      '',
      'By pool size (one run each, the service pinned as above; the batch size is read from its own metrics):',
      '',
      ...pools,
      '',
      `PostgreSQL over SQLite, median of each round's ratio: creates/s **${fmt(median(rpsRatios), 2)}×**, service CPU per create **${fmt(median(cpuRatios), 2)}×**.`,
      '',
      `Through PgBouncer (pool_mode = transaction, on the database's core(s)) over direct: creates/s **${fmt(median(poolerRps), 2)}×**, service CPU per create **${fmt(median(poolerCpu), 2)}×**.`,
      '',
      `Instances against one PostgreSQL, ${CONNECTIONS} connections spread evenly, nothing pinned: every process shares the machine's ${CPUS.loadThreads + 1} core(s). CPU columns are cores' worth of CPU time per second.`,
      '',
      ...sweep,
      ''
    ].join('\n')
  } finally {
    bouncer.stop()
    await pg.destroy()
  }
}

if (spawnSync('bash', [join(root, 'scripts/ensure-tool.sh'), 'wrk', 'wrk', 'npm run bench (its load generator)'], { stdio: 'inherit' }).status !== 0) process.exit(1)
if (process.env.BENCH_PG !== '0' && spawnSync('bash', [join(root, 'scripts/ensure-tool.sh'), 'pgbouncer', 'pgbouncer', 'npm run bench (its PostgreSQL section)'], { stdio: 'inherit', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin` } }).status !== 0) process.exit(1)
const only = process.env.BENCH_ONLY?.split(',')
const wanted = (name: string): boolean => only === undefined || only.includes(name)
if (wanted('shared-limits') && spawnSync('bash', [join(root, 'scripts/ensure-tool.sh'), 'redis-server', 'redis-server', 'npm run bench (its shared-limits section)'], { stdio: 'inherit' }).status !== 0) process.exit(1)
if (!CPUS.pinned) process.stderr.write('!!! One core only: servers and wrk share it, so the figures are not server-bound.\n')
try {
  const run = async (name: string, section: () => string | Promise<string>): Promise<string> => wanted(name) ? await section() : ''
  const sections = [
    `## Benchmark\n\n\`npm run bench\` on Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${CPUS.loadThreads + 1} cores (${readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU'}).\n`,
    await run('http', benchHttp),
    await run('traces', async () => await benchTraces({ service: (env, old) => service({ LOG_LEVEL: 'warn', ...env }, undefined, old ? before!.start : undefined), before: before?.ref, token: TOKEN, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, freshIds })),
    await run('footprint', benchFootprint),
    await run('jwt', async () => await benchJwt({ dir, token: TOKEN, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, freshIds })),
    await run('shared-limits', async () => await benchSharedLimits({ service: (env) => service(env), token: TOKEN, rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, freshIds })),
    await run('slow-disk', async () => await benchSlowDisk({ token: TOKEN, connections: CONNECTIONS, seconds: 5, rounds: ROUNDS, dir, freshIds, before })),
    process.env.BENCH_PG === '0' ? '' : await run('postgres', benchPostgres),
    process.env.BENCH_PG === '0' ? '' : await run('recovery', async () => await benchRecovery({ rounds: ROUNDS, token: TOKEN, service: (env) => service(env) })),
    process.env.BENCH_PG === '0' ? '' : await run('copy', async () => await benchCopy({ dir })),
    await run('json', benchJsonParse),
    await run('mock', async () => await benchMockReads({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, dir }) + '\n' + await benchMock({ rounds: ROUNDS })),
    await run('proxy', async () => await benchProxy({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, dir })),
    await run('hostile', async () => await benchHostile({ rounds: ROUNDS, dir, before }))
  ]
  const report = sections.filter(Boolean).join('\n')
  console.log(report)
  // One section alone is printed, not kept: results.md holds whole runs.
  if (only === undefined) {
    writeFileSync(RESULTS, report)
    console.log(`(written to ${RESULTS.slice(root.length)})`)
  }
} finally {
  before?.remove()
  rmSync(dir, { recursive: true, force: true })
}
