// The hostile section of npm run bench: what one hostile body costs the engine, read on the mock
// (npm run mock, pinned to its core) of a small document with a multipart upload and a form. For
// each body: the server's CPU time per request and how much its peak RSS grew, each body on a fresh
// process (a peak only rises), beside a small valid upload; this code's, and BENCH_BEFORE's.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'
import { start, stop } from '../corpus/mocks.ts'
import { CPUS, cpuSeconds, fmt, median, peakRssMiB, pinned, root } from './measure.ts'

const REQUESTS = 20

const document = {
  openapi: '3.1.0',
  info: { title: 'Hostile bodies', version: '1.0.0' },
  paths: {
    '/upload': { post: { requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' }, title: { type: 'string' } } } } } }, responses: { 200: { description: 'ok' }, 413: { description: 'too large' } } } },
    '/form': { post: { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { n: { type: 'integer' } } } } } }, responses: { 200: { description: 'ok' }, 413: { description: 'too large' } } } }
  }
}

const BOUNDARY = 'bench-boundary'
const multipart = (parts: number): Buffer => Buffer.from(Array.from({ length: parts }, (_, i) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${i === 0 ? 'file"; filename="a.txt' : 'title'}"\r\n\r\nx\r\n`).join('') + `--${BOUNDARY}--\r\n`)
const form = (fields: number): Buffer => Buffer.from(Array(fields).fill('n=1').join('&'))

interface Body { name: string, path: string, type: string, bytes: Buffer }
const BODIES: Body[] = [
  { name: 'multipart, 3 parts (valid)', path: '/upload', type: `multipart/form-data; boundary=${BOUNDARY}`, bytes: multipart(3) },
  { name: 'multipart, 1,000 parts (the bound)', path: '/upload', type: `multipart/form-data; boundary=${BOUNDARY}`, bytes: multipart(1000) },
  { name: 'multipart, 15,000 parts in 1 MiB', path: '/upload', type: `multipart/form-data; boundary=${BOUNDARY}`, bytes: multipart(15_000) },
  { name: 'form, 1,000 fields (the bound)', path: '/form', type: 'application/x-www-form-urlencoded', bytes: form(1000) },
  { name: 'form, 250,000 fields in 1 MiB', path: '/form', type: 'application/x-www-form-urlencoded', bytes: form(250_000) }
]

const send = async (url: string, body: Body): Promise<number> => {
  const res = await fetch(`${url}${body.path}`, { method: 'POST', headers: { 'content-type': body.type }, body: body.bytes })
  await res.arrayBuffer()
  return res.status
}

export async function benchHostile ({ rounds, dir, before }: { rounds: number, dir: string, before?: { ref: string, dir: string } }): Promise<string> {
  const file = join(dir, 'hostile.json')
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, JSON.stringify(document))
  const variants: Record<string, NodeCommand> = { this: nodeCommandOf(root, 'mock'), ...(before !== undefined && { [before.ref]: nodeCommandOf(before.dir, 'mock') }) }
  const figures = new Map<string, { cpuMs: number[], growthMiB: number[], statuses: Set<number> }>()
  for (let round = 1; round <= rounds; round++) {
    for (const body of BODIES) {
      for (const [name, script] of Object.entries(variants)) {
        process.stderr.write(`hostile: round ${round}/${rounds}, ${body.name}, ${name}\n`)
        const mock = await start('ours', file, '/upload', { script, wrap: (command) => pinned(CPUS.server, command) })
        if (mock === undefined) throw new Error(`the mock of ${name} did not start`)
        const pid = mock.child.pid!
        try {
          await send(mock.url, BODIES[0]) // the route's validators compiled, as in a warm server
          const [cpu, peak] = [cpuSeconds(pid), peakRssMiB(pid)]
          const key = `${body.name}\t${name}`
          const figure = figures.get(key) ?? { cpuMs: [], growthMiB: [], statuses: new Set() }
          for (let i = 0; i < REQUESTS; i++) figure.statuses.add(await send(mock.url, body))
          figure.cpuMs.push((cpuSeconds(pid) - cpu) * 1000 / REQUESTS)
          figure.growthMiB.push(peakRssMiB(pid) - peak)
          figures.set(key, figure)
        } finally {
          await stop(mock)
        }
      }
    }
  }
  const range = (values: number[], digits: number): string => `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`
  return [
    '### Hostile bodies',
    '',
    `The mock (\`npm run mock\`, pinned) of a document with a multipart upload and a form, a fresh process for each body, ${REQUESTS} requests of it one at a time after one small upload; median (range) of ${rounds} rounds. MAX_PARTS and BODY_LIMIT_BYTES at their defaults (1,000; 1 MiB).`,
    '',
    '| body | code | status | server CPU per request, ms | peak RSS growth, MiB |',
    '| --- | --- | --- | ---: | ---: |',
    ...[...figures].map(([key, { cpuMs, growthMiB, statuses }]) => {
      const [body, name] = key.split('\t')
      return `| ${body} | ${name} | ${[...statuses].join(', ')} | ${range(cpuMs, 2)} | ${range(growthMiB, 1)} |`
    }),
    ''
  ].join('\n')
}
