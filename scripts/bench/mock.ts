// The mock section of npm run bench: `npm run mock` on the biggest description at hand, GitHub's
// REST API (13 MB, 1,223 operations, OpenAPI 3.0.3), beside Stoplight's Prism on the same file,
// alternating starts. For each: the time from spawn to the first answer, the memory then, and the
// peak over the next SETTLE_MS (ours checks every example meanwhile). Nothing pinned: a mock is a
// developer's process on a developer's machine. Then what a read costs, pinned as the service is:
// GET of an item a client created, remembered (the default), against the same GET answered from
// the document's example (--stateless), alternating fresh mocks, server CPU per request.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { GITHUB, install, start, stop } from '../corpus/mocks.ts'
import { CPUS, fmt, measure, median, pinned, runLoad, spread, type Measured } from './measure.ts'

const SETTLE_MS = 20_000
const MOCKS = ['ours', 'prism']

const range = (values: number[], digits = 0): string => `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`

export async function benchMock ({ rounds }: { rounds: number }): Promise<string> {
  install()
  const figures = Object.fromEntries(MOCKS.map((name) => [name, { firstMs: [] as number[], atFirstMiB: [] as number[], peakMiB: [] as number[] }]))
  for (let round = 1; round <= rounds; round++) {
    for (const name of round % 2 === 0 ? [...MOCKS].reverse() : MOCKS) {
      process.stderr.write(`mock: round ${round}/${rounds}, ${name}\n`)
      const mock = await start(name, GITHUB, '/')
      if (mock === undefined) throw new Error(`${name} did not start on GitHub's description`)
      try {
        figures[name].firstMs.push(mock.bootMs)
        figures[name].atFirstMiB.push(mock.peakMiB())
        await sleep(SETTLE_MS)
        figures[name].peakMiB.push(mock.peakMiB())
      } finally {
        await stop(mock)
      }
    }
  }
  return [
    '### The mock: GitHub\'s description, against Prism',
    '',
    `GitHub's REST description (@octokit/openapi, 13 MB, 1,223 operations, OpenAPI 3.0.3), ${rounds} alternating starts of each mock, nothing pinned; median (range). Ours runs as \`npm run mock\` runs it; Prism as \`prism mock\`.`,
    '',
    `| mock | spawn to first answer, ms | peak RSS at the first answer, MiB | peak RSS in the next ${SETTLE_MS / 1000} s, MiB |`,
    '| --- | ---: | ---: | ---: |',
    ...MOCKS.map((name) => `| ${name} | ${range(figures[name].firstMs)} | ${range(figures[name].atFirstMiB)} | ${range(figures[name].peakMiB)} |`),
    ''
  ].join('\n')
}

// Orders as real descriptions write them: a create, and a read in an envelope with an example.
const order = { type: 'object', required: ['id', 'item', 'quantity'], properties: { id: { type: 'integer', readOnly: true }, item: { type: 'string' }, quantity: { type: 'integer', minimum: 1 }, createdAt: { type: 'string', format: 'date-time', readOnly: true } } }
export const orders = {
  openapi: '3.1.0',
  info: { title: 'Orders', version: '1.0.0' },
  paths: {
    '/orders': { post: { requestBody: { required: true, content: { 'application/json': { schema: order } } }, responses: { 201: { description: 'created', content: { 'application/json': { schema: order } } } } } },
    '/orders/{orderId}': {
      get: {
        parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          200: { description: 'the order', content: { 'application/json': { schema: { type: 'object', properties: { data: order } }, example: { data: { id: 1, item: 'Boston fern', quantity: 2, createdAt: '2026-11-27T10:00:00.000Z' } } } } },
          404: { description: 'none' }
        }
      }
    }
  }
}
const READS = { example: ['--stateless'], remembered: [] }

export async function benchMockReads ({ rounds, seconds, connections, dir }: { rounds: number, seconds: number, connections: number, dir: string }): Promise<string> {
  const file = join(dir, 'orders.json')
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, JSON.stringify(orders))
  const runs: Record<string, Measured[]> = { example: [], remembered: [] }
  for (let round = 1; round <= rounds; round++) {
    for (const name of (round % 2 === 0 ? ['remembered', 'example'] : ['example', 'remembered']) as Array<keyof typeof READS>) {
      process.stderr.write(`mock reads, round ${round}/${rounds}: ${name}\n`)
      const mock = await start('ours', file, '/orders/1', { args: READS[name], wrap: (command) => pinned(CPUS.server, command) })
      if (mock === undefined) throw new Error(`the ${name} mock did not start`)
      try {
        const created = await fetch(`${mock.url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'Boston fern', quantity: 2 }) })
        // The stateless mock answers the create with a sample: its read reads the same key all the same.
        const { id } = name === 'remembered' ? await created.json() as { id: number } : { id: 2 }
        const load = { url: mock.url, get: `/orders/${id}`, connections }
        await runLoad({ ...load, seconds: 6 })
        const run = await measure([mock.child.pid!], [{ ...load, seconds }])
        if (run.non2xx > 0 || run.socketErrors > 0) throw new Error(`${name}: ${run.non2xx} answers other than 2xx, ${run.socketErrors} socket errors`)
        runs[name].push(run)
      } finally {
        await stop(mock)
      }
    }
  }
  const row = (name: string) => `| ${name} | ${fmt(median(runs[name].map((r) => r.requests / r.seconds)))} | ${fmt(median(runs[name].map((r) => r.cpuUsPerRequest)), 1)} | ${fmt(median(runs[name].map((r) => r.p50Ms)), 2)} |`
  return [
    '### The mock: a remembered read against an example',
    '',
    `GET of an order a client created, on the mock pinned to one core and wrk on the other, ${connections} connections, ${seconds} s after a warm-up, ${rounds} alternating rounds of fresh mocks; median. "example": \`--stateless\`, the document's example; "remembered": the default, the order as created.`,
    '',
    '| read | requests/s | server CPU per request, µs | p50, ms |',
    '| --- | ---: | ---: | ---: |',
    row('example'),
    row('remembered'),
    '',
    `Remembered against example, CPU per request: ${spread(runs.remembered.map((r, i) => r.cpuUsPerRequest / runs.example[i].cpuUsPerRequest))} (target: at most 1.25×).`,
    ''
  ].join('\n')
}
