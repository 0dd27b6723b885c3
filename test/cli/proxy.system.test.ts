import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { spawnGroup } from '../helpers/children.ts'
import { logExcerpt } from '../helpers/log-file.ts'
import { nodeCommandOf } from '../helpers/npm-script.ts'
import { PETS, startPets, TOKEN } from '../helpers/pets-service.ts'

// npm run proxy as a command (src/cli/proxy.ts), as its npm script runs it, in front of the
// hand-written service of test/helpers/pets-service.ts with one fault: it says where it listens,
// passes the traffic, logs each violation as it is found, and on SIGTERM drains, prints its
// summary, writes its reports and exits 1; the token is in none of it.

const root = fileURLToPath(new URL('../../', import.meta.url))
// Seconds under a loaded CI; never a minute.
const BOUND_MS = 30_000

t.test('in front of a service with a fault: logged at once, reported on SIGTERM, exit 1', async (t) => {
  const { url: upstream } = await startPets(t, 'a required header missing')
  const dir = t.testdir({ 'pets.json': JSON.stringify(PETS) })
  const [report, junit] = [join(dir, 'report.json'), join(dir, 'junit.xml')]
  const script = nodeCommandOf(root, 'proxy')
  const child = spawnGroup(process.execPath, [...script.args, 'pets.json', upstream, '--report', 'report.json', '--junit', 'junit.xml'], {
    cwd: dir,
    env: { PATH: process.env.PATH, ...script.env, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const bounded = <T>(promise: Promise<T>, what: string): Promise<T> => Promise.race([promise, new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`${what} within ${BOUND_MS} ms: ${logExcerpt('proxy', output)}`)), BOUND_MS).unref())])

  const proxy = await bounded(new Promise<string>((resolve) => child.stdout!.on('data', () => {
    const found = /listening on (http:\S+)/.exec(output)?.[1]
    if (found !== undefined) resolve(found)
  })), 'listening')
  t.match(output, `Proxy for ${upstream}, judged by pets.json, listening on http://127.0.0.1:`)
  const answer = await fetch(`${proxy}/pets/1`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(BOUND_MS) })
  t.same([answer.status, await answer.json()], [200, { id: 1, name: 'Rex', tag: 'dog' }], 'the service\'s answer, passed on')
  await bounded(new Promise<void>((resolve) => child.stdout!.on('data', () => { if (output.includes('response_headers_conformance')) resolve() })), 'the violation logged')
  const line = JSON.parse(output.split('\n').find((l) => l.includes('"check":"response_headers_conformance"'))!)
  t.match(line, { level: 40, check: 'response_headers_conformance', operation: 'GET /pets/{id}', status: 200, curl: /^curl -sS -i -X GET 'http:\/\/127\.0\.0\.1:\d+\/pets\/1' .*-H 'authorization: '"\$AUTHORIZATION"/ }, 'logged at once, with its curl command')

  child.kill('SIGTERM')
  t.equal(await bounded(exited, 'exited'), 1, 'a violation found: exit 1')
  t.match(output, /✗ response_headers_conformance +1 violation/)
  t.match(output, /1 request in [\d.]+ s reached 1 of the document's 3 operations: 1 operation with violations\.\nNot reached: GET \/pets \(listPets\), POST \/pets \(addPet\)\./)
  const written = JSON.parse(readFileSync(report, 'utf8'))
  t.match(written.operations, [{ operationId: 'getPet', requests: 1, statuses: { 200: 1 }, violations: [{ check: 'response_headers_conformance' }] }])
  const xml = readFileSync(junit, 'utf8')
  t.match(xml, /<testsuites name="npm run proxy" tests="3" failures="1"/)
  t.match(xml, /<testcase classname="pets\.json" name="POST \/pets \(addPet\)">\n {6}<skipped message="not reached by the traffic"\/>/, 'an operation the traffic did not reach: skipped')
  t.notMatch(output + readFileSync(report, 'utf8') + readFileSync(junit, 'utf8'), TOKEN, 'the token is in no output and no report')
})

t.test('an upstream given with the base path of the document\'s server: said at start, as clients that send it would have it twice', async (t) => {
  const dir = t.testdir({ 'pets.json': JSON.stringify({ ...PETS, servers: [{ url: 'https://pets.example.com/v1' }] }) })
  const script = nodeCommandOf(root, 'proxy')
  const child = spawnGroup(process.execPath, [...script.args, 'pets.json', 'http://127.0.0.1:9/v1/'], { cwd: dir, env: { PATH: process.env.PATH, ...script.env, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stderr!.on('data', (chunk) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  await Promise.race([
    new Promise<void>((resolve) => child.stdout!.on('data', (chunk) => { output += chunk; if (/listening on http:\S+\n/.test(output) && output.endsWith('\n\n')) resolve() })),
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`listening within ${BOUND_MS} ms: ${logExcerpt('proxy', output)}`)), BOUND_MS).unref())
  ])
  t.match(output, "a client's /v1/… arrives there as /v1/v1/…. If clients send the document's base path /v1, give the upstream without it.")
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'nothing seen, nothing found')
})
