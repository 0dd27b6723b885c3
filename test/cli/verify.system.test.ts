import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { PETS, startPets, TOKEN } from '../helpers/pets-service.ts'

// npm run verify as a command (src/cli/verify.ts), against the hand-written service of
// test/helpers/pets-service.ts: its exit status, its summary, its reports, a dry run, credentials
// from the environment, and the mistakes it refuses with its usage.

const command = fileURLToPath(new URL('../../src/cli/verify.ts', import.meta.url))

async function run (args: string[], env: Record<string, string> = {}): Promise<{ status: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [command, ...args], { env: { PATH: process.env.PATH, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { status, stdout, stderr }
}

/** The test's own folder, with the service's document in it. */
function folderOf (t: Test): { dir: string, document: string } {
  const dir = t.testdir({ 'pets.json': JSON.stringify(PETS) })
  return { dir, document: join(dir, 'pets.json') }
}

t.test('a service that keeps its word: exit 0, a summary, a JSON report and JUnit XML', async (t) => {
  const { url } = await startPets(t)
  const { dir, document } = folderOf(t)
  const [report, junit] = [join(dir, 'report.json'), join(dir, 'junit.xml')]
  const ran = await run([document, url, '--seed', '3', '--report', report, '--junit', junit], { VERIFY_BEARER: TOKEN })
  t.equal(ran.status, 0, ran.stdout + ran.stderr)
  t.match(ran.stdout, /✓ not_a_server_error {10,}nothing found/)
  t.match(ran.stdout, /3 operations verified with \d+ requests in [\d.]+ s \(1 resource followed in sequences, with \d+ requests of those\): no violation\.\nSeed 3: --seed 3 sends the same requests again\./)
  t.match(ran.stderr, '3/3 operations', 'the progress line')
  const written = JSON.parse(readFileSync(report, 'utf8'))
  t.match(written, { document, baseUrl: url, seed: 3 })
  t.same(written.operations.map((o: any) => Object.keys(o)), Array(3).fill(['method', 'path', 'operationId', 'requests', 'violations', 'notes']), 'one entry per operation, as documented')
  t.same(written.operations.map((o: any) => [o.method, o.path, o.operationId, o.violations]), [['GET', '/pets', 'listPets', []], ['POST', '/pets', 'addPet', []], ['GET', '/pets/{id}', 'getPet', []]])
  const xml = readFileSync(junit, 'utf8')
  t.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="npm run verify" tests="3" failures="0"/)
  t.equal(xml.match(/<testcase /g)?.length, 3, 'a test case per operation')
})

t.test('a service that breaks its word: exit 1, each violation with its curl command, the token never shown', async (t) => {
  const { url } = await startPets(t, 'a 5xx')
  const { dir, document } = folderOf(t)
  const [report, junit] = [join(dir, 'report.json'), join(dir, 'junit.xml')]
  // A seed whose first generated limit is not the sample's 1 already, which leaves nothing to shrink (seed 36's is).
  const ran = await run([document, url, '--seed', '1', '--bearer', TOKEN, '--report', report, '--junit', junit, '--exclude-checks', 'status_code_conformance'])
  t.equal(ran.status, 1)
  t.match(ran.stdout, /GET \/pets \(listPets\)\n {2}✗ not_a_server_error \(shrunk\): answered 500\n {4}curl -sS -i -X GET 'http:\/\/127\.0\.0\.1:\d+\/pets\?limit=\d+' -H 'authorization: Bearer '"\$VERIFY_BEARER"/, 'found by the sample and by generated values: once, by the shrunk request')
  t.match(ran.stdout, /✓ status_code_conformance +nothing found/, 'a check switched off finds nothing')
  t.notMatch(ran.stdout + readFileSync(report, 'utf8') + readFileSync(junit, 'utf8'), TOKEN, 'the token is in no output and no report')
  const [violation] = JSON.parse(readFileSync(report, 'utf8')).operations[0].violations
  t.match(violation, { check: 'not_a_server_error', status: 500, detail: 'answered 500', curl: /^curl / })
  t.match(readFileSync(junit, 'utf8'), /<testcase classname="[^"]*pets\.json" name="GET \/pets \(listPets\)">\n {6}<failure type="not_a_server_error" message="not_a_server_error: answered 500">curl /)
})

t.test('a dry run lists what it would send and sends nothing; --only-safe keeps to GET, HEAD and OPTIONS', async (t) => {
  const { url, requests } = await startPets(t)
  const dry = await run([folderOf(t).document, url, '--dry-run', '--seed', '1', '--only-safe'], { VERIFY_BEARER: TOKEN })
  t.equal(dry.status, 0, dry.stderr)
  t.equal(requests.length, 0, 'nothing sent')
  t.match(dry.stdout, /^GET \/pets \(listPets\)\n {2}valid, sample: curl -sS -i -X GET '/)
  t.match(dry.stdout, / {2}invalid, no credentials: curl -sS -i -X GET 'http:\/\/127\.0\.0\.1:\d+\/pets\?limit=1'\n/)
  t.match(dry.stdout, / {2}invalid, parameter out of its bounds \(limit maximum\): curl -sS -i -X GET 'http:\/\/127\.0\.0\.1:\d+\/pets\?limit=101'/, 'a value past a bound, named')
  t.notMatch(dry.stdout, /POST|addPet/, 'only the safe operations')
  t.match(dry.stdout, /\n\d+ requests would be sent \(seed 1\)\.\n$/)
  // Nothing answered, so nothing failed: three values drawn for an operation (--generated's default), none shrunk, each request listed once.
  const listPets = dry.stdout.split(/\n(?=\S)/).find((operation) => operation.startsWith('GET /pets (listPets)'))!
  t.equal(listPets.split('\n').filter((line) => line.startsWith('  valid, generated: ')).length, 3, 'three values drawn')
  t.equal(dry.stdout.split('\n').filter((line) => line.startsWith('  ')).length, Number(/(\d+) requests would be sent/.exec(dry.stdout)?.[1]), 'as many listed as counted')
})

t.test('the wrong credentials: every valid request refused, and the report says to look at them', async (t) => {
  const { url } = await startPets(t)
  const { dir, document } = folderOf(t)
  const report = join(dir, 'report.json')
  const ran = await run([document, url, '--bearer', 'not-the-token', '--report', report])
  t.equal(ran.status, 0, 'a 401 breaks no check')
  t.match(ran.stdout, '3 operations verified in part (see the notes in --report).')
  t.match(JSON.parse(readFileSync(report, 'utf8')).operations[0].notes, ['every valid request was answered 401: are the credentials given the ones it takes?'])
})

t.test('what it cannot run says why, with the usage, and exits 2', async (t) => {
  const { dir, document } = folderOf(t)
  for (const [args, why] of [
    [[], /^a document and a base URL, and nothing else, come before the options\n\nUsage: npm run verify/],
    [[document, 'localhost:3000'], /^the base URL must be http:\/\/ or https:\/\/, not "localhost:3000"/],
    [[document, 'http://127.0.0.1:9', '--checks', 'everything'], /^no check is named "everything" \(there are not_a_server_error, /],
    [[document, 'http://127.0.0.1:9', '--generated', 'many'], /^--generated must be a whole number, not "many"/],
    [[document, 'http://127.0.0.1:9', '--verbose'], /^Unknown option '--verbose'/],
    [[join(dir, 'missing.yaml'), 'http://127.0.0.1:9'], /^npm run verify cannot run: .*missing\.yaml/]
  ] as Array<[string[], RegExp]>) {
    const ran = await run(args)
    t.equal(ran.status, 2, args.join(' '))
    t.match(ran.stderr, why)
    t.notMatch(ran.stderr, /\n\s+at /, 'no stack trace')
  }
  // A run that verifies nothing does not pass: a document of webhooks alone, which the service sends.
  const hooks = join(dir, 'hooks.json')
  writeFileSync(hooks, JSON.stringify({ openapi: '3.1.0', info: { title: 'Hooks', version: '1' }, webhooks: { newPet: { post: { responses: { 200: { description: 'ok' } } } } } }))
  const empty = await run([hooks, 'http://127.0.0.1:9'])
  t.equal(empty.status, 2, 'nothing verified')
  t.match(empty.stderr, /^Nothing was verified: the document has no operation to send \(its 1 webhook\(s\) are requests the service sends, not ones sent to it\)\.\n$/)
})
