// The proxy section of npm run bench: `npm run proxy` in front of the mock (`--stateless`, the
// orders document's example: a small JSON answer), against the same mock asked directly. What the
// proxy costs: its CPU per request (it receives, forwards, receives again, answers, and judges
// both) over the mock's for the same answers, each pinned to the server core in turn with wrk on
// the other (the proxy's upstream mock on the load core); and the latency it adds, p50 through it
// less p50 direct, one connection at a time, nothing saturated. Beside them, the proxy's forwarding
// alone (forward.ts), nothing judged: the floor under the proxy's figures. Rounds alternate the order.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { start, stop, type Mock } from '../corpus/mocks.ts'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'
import { CPUS, fmt, measure, median, pinned, root, runLoad, spread, type Measured } from './measure.ts'
import { orders } from './mock.ts'

const READ = '/orders/1'

export async function benchProxy ({ rounds, seconds, connections, dir }: { rounds: number, seconds: number, connections: number, dir: string }): Promise<string> {
  const file = join(dir, 'orders.json')
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, JSON.stringify(orders))
  const throughput: Record<string, Measured[]> = { direct: [], forwarding: [], proxy: [] }
  const latency: Record<string, Measured[]> = { direct: [], forwarding: [], proxy: [] }
  const proxyCommand = nodeCommandOf(root, 'proxy')
  const scripts: Record<string, NodeCommand> = {
    proxy: proxyCommand,
    // The proxy's own command, its forwarding alone in place of it.
    forwarding: { env: proxyCommand.env, args: proxyCommand.args.map((arg) => arg.endsWith('proxy.ts') ? join(root, 'scripts/bench/forward.ts') : arg) }
  }
  const mockOn = async (cpus: string): Promise<Mock> => {
    const mock = await start('ours', file, READ, { args: ['--stateless'], wrap: (command) => pinned(cpus, command) })
    if (mock === undefined) throw new Error('the mock did not start')
    return mock
  }
  for (let round = 1; round <= rounds; round++) {
    for (const name of round % 2 === 0 ? ['proxy', 'forwarding', 'direct'] : ['direct', 'forwarding', 'proxy']) {
      process.stderr.write(`proxy, round ${round}/${rounds}: ${name}\n`)
      // Direct: the mock on the server core. Through the proxy: the proxy there, its upstream with the load.
      const mock = await mockOn(name === 'direct' ? CPUS.server : CPUS.load)
      const proxy = name === 'direct' ? undefined : await start('ours', file, READ, { script: scripts[name], args: [mock.url], wrap: (command) => pinned(CPUS.server, command) })
      try {
        const served = proxy ?? mock
        if (served === undefined) throw new Error(`the ${name} proxy did not start`)
        const load = { url: served.url, get: READ }
        await runLoad({ ...load, connections, seconds: 6 })
        const busy = await measure([served.child.pid!], [{ ...load, connections, seconds }])
        const one = await measure([served.child.pid!], [{ ...load, connections: 1, seconds }])
        for (const run of [busy, one]) if (run.non2xx > 0 || run.socketErrors > 0) throw new Error(`${name}: ${run.non2xx} answers other than 2xx, ${run.socketErrors} socket errors`)
        throughput[name].push(busy)
        latency[name].push(one)
      } finally {
        if (proxy !== undefined) await stop(proxy)
        await stop(mock)
      }
    }
  }
  const row = (name: string) => `| ${name} | ${fmt(median(throughput[name].map((r) => r.requests / r.seconds)))} | ${fmt(median(throughput[name].map((r) => r.cpuUsPerRequest)), 1)} | ${fmt(median(latency[name].map((r) => r.p50Ms)), 3)} | ${fmt(median(latency[name].map((r) => r.p99Ms)), 3)} |`
  const added = latency.proxy.map((r, i) => r.p50Ms - latency.direct[i].p50Ms)
  const over = (name: string): string => spread(throughput[name].map((r, i) => r.cpuUsPerRequest / throughput.direct[i].cpuUsPerRequest))
  return [
    '### The proxy: in front of the mock, against the mock asked directly',
    '',
    `GET of the orders document's example (a small JSON answer) from the mock (\`--stateless\`), directly, through \`npm run proxy\`, and through its forwarding alone with nothing judged (scripts/bench/forward.ts); ${rounds} alternating rounds of fresh processes, median. Requests/s and CPU per request: ${connections} connections, ${seconds} s after a warm-up, the server asked (the mock, or the proxy) pinned to one core, wrk and the proxy's upstream on the other. p50 and p99: one connection, ${seconds} s.`,
    '',
    '| served | requests/s | its CPU per request, µs | p50 at one connection, ms | p99, ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    row('direct'),
    row('forwarding'),
    row('proxy'),
    '',
    `The proxy's CPU per request over the mock's: ${over('proxy')} (target: at most 2×); its forwarding alone: ${over('forwarding')}. Latency added at p50: ${fmt(median(added), 3)} ms (${fmt(Math.min(...added), 3)}–${fmt(Math.max(...added), 3)}; target: under 1 ms).`,
    ''
  ].join('\n')
}
