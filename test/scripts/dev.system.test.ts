import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { childrenOf, waitFor } from '../helpers/proc.js'
import { killGroup, spawnGroup } from '../helpers/children.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

// npm, tsx and what they run: where a wait that times out was stuck.
const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)]

// `npm run dev:codegen`, the codegen half of `npm run dev`, run as written in package.json,
// in a scratch copy of the project's contract: never the real openapi.yaml.
t.test('npm run dev regenerates the types when openapi.yaml changes', async (t) => {
  // Outside the project: tsx watch ignores files under dot-folders such as tap's .tap/.
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-dev-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
  copyFileSync(join(root, 'openapi.yaml'), join(dir, 'openapi.yaml'))
  mkdirSync(join(dir, 'generated'))
  symlinkSync(join(root, 'scripts'), join(dir, 'scripts'))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const output = join(dir, 'generated', 'openapi.d.ts')
  const read = () => { try { return readFileSync(output, 'utf8') } catch { return '' } }

  // Its tsx child reports no coverage: tsx joins lines, which would garble the figures for
  // scripts/generate.ts that the other tests measure (see server-process.ts).
  const dev = spawnGroup('npm', ['run', 'dev:codegen'], { cwd: dir, stdio: 'ignore', env: { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' } })
  t.teardown(() => { killGroup(dev) })

  await waitFor(() => read().includes('NewPlant'), 60_000, 'the first generation', () => tree(dev.pid!))
  t.notMatch(read(), /height/)
  await sleep(2000) // tsx starts watching once its first run is under way

  const spec = readFileSync(join(dir, 'openapi.yaml'), 'utf8')
  writeFileSync(join(dir, 'openapi.yaml'), spec.replace(
    '        tag:\n          type: string\n',
    '        tag:\n          type: string\n        height:\n          type: number\n'
  ))
  await waitFor(() => read().includes('height?: number;'), 60_000, 'the regeneration', () => tree(dev.pid!))
  t.pass('the edit reached generated/openapi.d.ts')
  t.equal(readFileSync(join(root, 'openapi.yaml'), 'utf8'), spec, 'the real openapi.yaml is untouched')
})

t.test('npm run dev shows the logs pretty-printed, one line per request', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-dev-api-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const token = 'dev-api-token-0123456789abcdef'
  let output = ''
  // Its tsx child reports no coverage, as above.
  const dev = spawnGroup('npm', ['run', 'dev:api'], {
    cwd: root,
    env: { ...process.env, PORT: '0', API_TOKENS: token, LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'plants.db')}`, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  })
  t.teardown(() => { killGroup(dev) })
  dev.stdout.on('data', (chunk) => { output += chunk })
  await waitFor(() => /API docs/.test(output), 60_000, 'the server to listen', () => tree(dev.pid!))
  const url = /listening on (\S+)/.exec(output)![1]
  const res = await fetch(`${url}/plants`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'pretty-1' }, body: '{"id":1,"name":"Fern"}' })
  t.equal(res.status, 200)
  await waitFor(() => output.includes('pretty-1'), 60_000, 'the access line', () => tree(dev.pid!))
  const lines = output.split('\n').filter((line) => line.includes('pretty-1'))
  t.equal(lines.length, 1, 'one line for the request')
  t.match(lines[0], /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request \{"reqId":"pretty-1","method":"POST","url":"\/plants","statusCode":200,/, 'pino-pretty\'s format, not a JSON line')
})
