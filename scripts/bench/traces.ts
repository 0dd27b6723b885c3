// The traces section of npm run bench: what tracing costs a create, sampled three ways, over the
// same code with traces off. Each round starts every server afresh and runs them back to back,
// in a rotated order; a ratio is taken within a round (seconds apart), then the median and range
// of the rounds'. BENCH_BEFORE's code runs the same four beside this code's.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { coreBusy, fmt, freshServerRounds, median, spread, type FreshRun, type Server } from './measure.ts'

export interface TracesBenchOptions {
  /** A server of the code (`before`: the code before) with these variables, at LOG_LEVEL=warn. */
  service: (env: Record<string, string>, before: boolean) => (name: string) => Promise<Server>
  before?: string
  token: string
  rounds: number
  seconds: number
  connections: number
  freshIds: () => number
}

const OFF = 'traces off'
const SAMPLINGS: Record<string, Record<string, string>> = {
  [OFF]: {},
  'every request dropped': { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  '1 in 10 kept': { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  'every request kept': {}
}

export async function benchTraces ({ service, before, token, rounds, seconds, connections, freshIds }: TracesBenchOptions): Promise<string> {
  // A collector that takes every export and keeps nothing.
  const collector = createServer((request, response) => { request.resume(); request.on('end', () => response.end()) })
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
  const codes = before === undefined ? ['this code'] : ['this code', `before (${before})`]
  const starts = Object.fromEntries(codes.flatMap((code) => Object.entries(SAMPLINGS).map(([sampling, env]) =>
    [`${code}, ${sampling}`, service(sampling === OFF ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env }, code !== 'this code')])))
  let runs: Record<string, FreshRun[]>
  try {
    runs = await freshServerRounds('traces', starts, { connections, token }, { rounds, seconds, freshIds })
  } finally {
    collector.close()
  }
  const cpu = (code: string, sampling: string): number[] => runs[`${code}, ${sampling}`].map((r) => r.cpuUsPerRequest)
  const over = (code: string, sampling: string, base: string, baseSampling = OFF): number[] => cpu(code, sampling).map((us, i) => us / cpu(base, baseSampling)[i])
  // Peak RSS over traces off's in the same round, MiB: the median and the range of the rounds'.
  const rss = (code: string, sampling: string): number[] => runs[`${code}, ${sampling}`].map((r) => r.peakRssMiB)
  const rssOver = (code: string, sampling: string): string => {
    const grown = rss(code, sampling).map((mib, i) => mib - rss(code, OFF)[i])
    return `${fmt(median(grown), 1)} (${fmt(Math.min(...grown), 1)} to ${fmt(Math.max(...grown), 1)})`
  }
  const table = [
    `| creates, LOG_LEVEL=warn | ${codes.map((code) => `${code}: µs/create | over traces off | peak RSS, MiB | over traces off, MiB | server core busy`).join(' | ')} |`,
    `| --- |${' ---: | ---: | ---: | ---: | ---: |'.repeat(codes.length)}`,
    ...Object.keys(SAMPLINGS).map((sampling) => `| ${sampling} | ${codes.map((code) => `${fmt(median(cpu(code, sampling)), 1)} | ${sampling === OFF ? '1.00×' : `**${spread(over(code, sampling, code))}**`} | ${fmt(median(rss(code, sampling)), 1)} | ${sampling === OFF ? '' : rssOver(code, sampling)} | ${coreBusy(runs[`${code}, ${sampling}`])}`).join(' | ')} |`)
  ]
  return [
    '### Traces: what tracing costs a create',
    '',
    `Each server as \`npm start\` runs it, at LOG_LEVEL=warn, on a fresh SQLite file, alone on the server's core; ${connections} connections of creates from wrk; ${rounds} rounds of ${seconds} s, each starting every server afresh (warmed up) and running them back to back in a rotated order. Traces are exported as OTLP/HTTP (the default protocol) to a collector on loopback that discards them. The ratio is the server's CPU per create over the same code's with traces off in the same round: the median of the rounds, their range in brackets. Dropped: \`OTEL_TRACES_SAMPLER=parentbased_traceidratio\` at 0; 1 in 10: at 0.1; every request: the default sampler. Peak RSS: the server's VmHWM after its warm-up and measurement; over traces off: the difference within a round, median (range). Server core busy: its CPU seconds per second, the least of the rounds; near 1.00, its core was saturated and wrk kept up.`,
    '',
    ...table,
    '',
    ...(codes.length === 1
      ? []
      : [`This code over ${codes[1]}, µs per create, median of the rounds' ratios (range): ${Object.keys(SAMPLINGS).map((sampling) => `${sampling} **${spread(over(codes[0], sampling, codes[1], sampling))}**`).join(', ')}.`, ''])
  ].join('\n')
}
