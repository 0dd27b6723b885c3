// The slow-disk section of npm run bench: cloud block storage takes 1-10 ms per fsync, not this
// machine's 0.3 ms. strace's fault injection adds 5 ms to every fsync and fdatasync of the
// service, in every thread. Creates flood the service while one extra connection asks /healthz,
// as a load balancer's probe would. BENCH_BEFORE=<git ref> also builds and runs that commit's
// code, in the same run, for a before-and-after table.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'
import { CPUS, fmt, measure, median, peakRssMiB, root, startServer, type BuiltRef } from './measure.ts'

const FSYNC_DELAY_US = 5000
const SLOW_DISK = ['strace', '-f', '-qq', '-o', '/dev/null', '--seccomp-bpf', '-e', 'trace=fsync,fdatasync', '-e', `inject=fsync,fdatasync:delay_exit=${FSYNC_DELAY_US}`]

export interface SlowDiskOptions { token: string, connections: number, seconds: number, rounds: number, dir: string, freshIds: () => number, before?: BuiltRef }

/** GET /healthz on one keep-alive connection, one request at a time, until `stop`: each answer's latency in ms. */
async function probe (url: string, stop: Promise<unknown>): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const latencies: number[] = []
  const state = { done: false }
  stop.then(() => { state.done = true }, () => { state.done = true })
  while (!state.done) {
    const started = performance.now()
    await new Promise<void>((resolve, reject) => {
      request(`${url}/healthz`, { agent }, (res) => { res.resume(); res.on('end', resolve) }).on('error', reject).end()
    })
    latencies.push(performance.now() - started)
  }
  agent.destroy()
  return latencies
}

const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p / 100))]

interface Row { rps: number, p50: number, p99: number, healthzP99: number, cpuUs: number, rssMiB: number }

export async function benchSlowDisk ({ token, connections, seconds, rounds, dir, freshIds, before }: SlowDiskOptions): Promise<string> {
  if (spawnSync('bash', [join(root, 'scripts/ensure-tool.sh'), 'strace', 'strace', 'the bench\'s slow-disk section'], { stdio: 'inherit' }).status !== 0) return ''
  const codes: Record<string, NodeCommand> = { 'this code': nodeCommandOf(root, 'start') }
  if (before !== undefined) codes[`before (${before.ref})`] = before.start
  const runs: Record<string, Row[]> = {}
  for (let round = 1; round <= rounds; round++) {
    for (const [code, start] of Object.entries(codes)) {
      for (const [disk, wrapper] of [['fast disk', []], [`fsync + ${FSYNC_DELAY_US / 1000} ms`, SLOW_DISK]] as const) {
        const name = `${code}, ${disk}`
        process.stderr.write(`round ${round}/${rounds}: ${name}\n`)
        const env = { API_TOKENS: token, LOG_LEVEL: 'warn', DATABASE_URL: `sqlite:${join(dir, `slow-${round}-${Object.keys(runs).length}.db`)}` }
        const instance = await startServer(name, start, env, CPUS.server, [...wrapper])
        // strace forks Node: the pid to read, and to stop, is its child's. strace ends with it.
        const pid = wrapper.length === 0 ? instance.child.pid! : Number(execFileSync('pgrep', ['-P', String(instance.child.pid)], { encoding: 'utf8' }).trim())
        try {
          await measure([pid], [{ url: instance.url, connections, seconds: 2, token, firstId: freshIds() }]) // warm-up
          const loading = measure([pid], [{ url: instance.url, connections, seconds, token, firstId: freshIds() }])
          const healthz = await probe(instance.url, loading)
          const run = await loading
          if (run.non2xx > 0 || run.socketErrors > 0) throw new Error(`${name}: ${run.non2xx} answers other than 200, ${run.socketErrors} socket errors`)
          ;(runs[name] ??= []).push({ rps: run.requests / run.seconds, p50: run.p50Ms, p99: run.p99Ms, healthzP99: percentile(healthz, 99), cpuUs: run.cpuUsPerRequest, rssMiB: existsSync(`/proc/${pid}`) ? peakRssMiB(pid) : NaN })
        } finally {
          const exited = new Promise((resolve) => instance.child.once('exit', resolve))
          process.kill(pid, 'SIGTERM')
          await exited
        }
      }
    }
  }
  const row = (name: string, r: Row[]) => `| ${name} | ${fmt(median(r.map((x) => x.rps)))} | ${fmt(median(r.map((x) => x.p50)), 2)} | ${fmt(median(r.map((x) => x.p99)), 2)} | ${fmt(median(r.map((x) => x.healthzP99)), 2)} | ${fmt(median(r.map((x) => x.cpuUs)), 1)} | ${fmt(median(r.map((x) => x.rssMiB)), 1)} |`
  return [
    `### Slow disk: every fsync ${FSYNC_DELAY_US / 1000} ms slower (strace fault injection)`,
    '',
    `The service on core ${CPUS.server} at LOG_LEVEL=warn on SQLite, ${connections} connections of creates from wrk for ${seconds} s, and one more connection asking /healthz one request at a time; medians of ${rounds} round(s). Server CPU is Node's own, without strace's.`,
    '',
    '| code, disk | creates/s | p50 ms | p99 ms | /healthz p99 ms | server CPU µs/create | peak RSS MiB |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...Object.entries(runs).map(([name, r]) => row(name, r)),
    ''
  ].join('\n')
}
