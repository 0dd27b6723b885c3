// The shared rate limits section of npm run bench: what counting each create in Redis costs the
// service (RATE_LIMIT_REDIS_URL), against counting it in its own memory and against no limit.
// Redis (Debian's) runs on the load core(s), beside wrk; the limit is far above the load, so every
// create is counted and none refused. Each round starts each server afresh, in a rotated order.
import { startRedis } from '../../test/helpers/redis.ts'
import { CPUS, fmt, freshServerRounds, median, spread, type Server } from './measure.ts'

export interface SharedLimitsBenchOptions {
  /** A server of this code, at LOG_LEVEL=warn, with these variables. */
  service: (env: Record<string, string>) => (name: string) => Promise<Server>
  token: string
  rounds: number
  seconds: number
  connections: number
  freshIds: () => number
}

const LIMIT = '1000000'

export async function benchSharedLimits ({ service, token, rounds, seconds, connections, freshIds }: SharedLimitsBenchOptions): Promise<string> {
  const closers: Array<() => unknown> = []
  const redis = await startRedis({ teardown: (close) => { closers.push(close) } }, { cpus: CPUS.load })
  try {
    const variants: Record<string, Record<string, string>> = {
      'no limit': {},
      'limits counted in memory': { RATE_LIMIT_PER_MINUTE: LIMIT },
      'limits counted in Redis': { RATE_LIMIT_PER_MINUTE: LIMIT, RATE_LIMIT_REDIS_URL: redis.url }
    }
    const names = Object.keys(variants)
    const starts = Object.fromEntries(names.map((name) => [name, service({ LOG_LEVEL: 'warn', ...variants[name] })]))
    const runs = await freshServerRounds('shared limits', starts, { connections, token }, { rounds, seconds, freshIds })
    const cpu = (name: string): number[] => runs[name].map((r) => r.cpuUsPerRequest)
    const over = (name: string, base: string): number[] => cpu(name).map((us, i) => us / cpu(base)[i])
    return [
      '### Shared rate limits: what counting in Redis costs a create',
      '',
      `Each server as \`npm start\` runs it, at LOG_LEVEL=warn, on a fresh SQLite file, alone on core ${CPUS.server}; Debian's redis-server on core(s) ${CPUS.load} with wrk (${connections} connections of creates); ${rounds} rounds of ${seconds} s, each starting every server afresh (warmed up) in a rotated order. RATE_LIMIT_PER_MINUTE is ${fmt(Number(LIMIT))}: every create is counted, none refused. The ratio is the server's CPU per create over the same round's in-memory count: the median of the rounds (range).`,
      '',
      '| creates, LOG_LEVEL=warn | creates/s | server CPU µs/create | over counting in memory | p50 / p99 ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...names.map((name) => `| ${name} | ${fmt(median(runs[name].map((r) => r.requests / r.seconds)))} | ${fmt(median(cpu(name)), 1)} | ${name === names[1] ? '1.00×' : `**${spread(over(name, names[1]))}**`} | ${fmt(median(runs[name].map((r) => r.p50Ms)), 1)} / ${fmt(median(runs[name].map((r) => r.p99Ms)), 1)} |`),
      ''
    ].join('\n')
  } finally {
    for (const close of closers) await close()
  }
}
