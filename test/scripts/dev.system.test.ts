import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { childrenOf, waitFor } from '../helpers/proc.ts'
import { killGroup, spawnGroup } from '../helpers/children.ts'
import { splitDocument } from '../helpers/split-document.ts'
import { loadDocument } from '../../src/openapi/document/document.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))

// npm, tsx and what they run: where a wait that times out was stuck.
const tree = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(tree)]

/**
 * A scratch project outside the repository (never the real openapi.yaml), whose document `write`
 * makes; the repository's folders `linked`, and those `copied` (what must resolve from the scratch
 * folder, not the repository: the service's source, the scripts that run it).
 */
function scratchProject (t: Test, write: (dir: string) => void, { linked, copied = [] }: { linked: string[], copied?: string[] }): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-dev-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
  write(dir)
  for (const folder of copied) cpSync(join(root, folder), join(dir, folder), { recursive: true })
  for (const folder of linked) symlinkSync(join(root, folder), join(dir, folder))
  return dir
}

const CODEGEN = { linked: ['scripts', 'node_modules'] }

/** `npm run dev:codegen`, the codegen half of `npm run dev`, run as written in package.json, in `dir`; its output, once first written. */
async function codegen (t: Test, dir: string): Promise<{ read: () => string, pid: number }> {
  mkdirSync(join(dir, 'generated'))
  const output = join(dir, 'generated', 'openapi.d.ts')
  const read = () => { try { return readFileSync(output, 'utf8') } catch { return '' } }
  // Its tsx child reports no coverage: tsx joins lines, which would garble the figures for
  // scripts/generate.ts that the other tests measure (see server-process.ts).
  const dev = spawnGroup('npm', ['run', 'dev:codegen'], { cwd: dir, stdio: 'ignore', env: { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' } })
  t.teardown(() => { killGroup(dev) })
  await waitFor(() => read().includes('NewPlant'), 60_000, 'the first generation', () => tree(dev.pid!))
  await sleep(1000) // the watches are set once the first generation is written
  return { read, pid: dev.pid! }
}

t.test('npm run dev regenerates the types when openapi.yaml changes', async (t) => {
  const dir = scratchProject(t, (dir) => copyFileSync(join(root, 'openapi.yaml'), join(dir, 'openapi.yaml')), CODEGEN)
  const { read, pid } = await codegen(t, dir)
  t.notMatch(read(), /height/)
  const spec = readFileSync(join(dir, 'openapi.yaml'), 'utf8')
  writeFileSync(join(dir, 'openapi.yaml'), spec.replace(
    '        tag:\n          type: string\n',
    '        tag:\n          type: string\n        height:\n          type: number\n'
  ))
  await waitFor(() => read().includes('height?: number;'), 60_000, 'the regeneration', () => tree(pid))
  t.pass('the edit reached generated/openapi.d.ts')
  t.equal(readFileSync(join(root, 'openapi.yaml'), 'utf8'), spec, 'the real openapi.yaml is untouched')
})

t.test('npm run dev regenerates the types when any file of a split document changes', async (t) => {
  const plantStore = (await loadDocument(join(root, 'openapi.yaml'))).document
  const dir = scratchProject(t, (dir) => splitDocument(plantStore, dir), CODEGEN)
  const { read, pid } = await codegen(t, dir)
  // Plant is in schemas/Plant.yaml: openapi.yaml does not change.
  const plant = join(dir, 'schemas', 'Plant.yaml')
  writeFileSync(plant, readFileSync(plant, 'utf8').replace('  tag:\n', '  height:\n    type: number\n  tag:\n'))
  await waitFor(() => read().includes('height?: number;'), 60_000, 'the regeneration', () => tree(pid))
  t.pass('the edit of schemas/Plant.yaml reached generated/openapi.d.ts')
})

t.test('npm run dev restarts the service when any file of a split document changes', async (t) => {
  const plantStore = (await loadDocument(join(root, 'openapi.yaml'))).document
  // The service reads the openapi.yaml beside its source, and dev-api.ts runs the source beside it: both copied.
  const dir = scratchProject(t, (dir) => splitDocument(plantStore, dir), { linked: ['node_modules', 'generated'], copied: ['src', 'scripts'] })
  const token = 'dev-api-token-0123456789abcdef'
  let output = ''
  const dev = spawnGroup('npm', ['run', 'dev:api'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', API_TOKENS: token, LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'plants.db')}`, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  })
  t.teardown(() => { killGroup(dev) })
  dev.stdout.on('data', (chunk) => { output += chunk })
  const listening = async (after: number): Promise<string> => {
    await waitFor(() => /listening on \S+/.test(output.slice(after)), 60_000, 'the server to listen', () => tree(dev.pid!))
    return /listening on (\S+)/.exec(output.slice(after))![1]
  }
  const create = async (url: string, id: number) => await fetch(`${url}/plants`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: `{"id":${id},"name":"Fern"}` })
  t.equal((await create(await listening(0), 1)).status, 200, 'a plant with no tag')

  // schemas/Plant.yaml now requires a tag: openapi.yaml does not change.
  const plant = join(dir, 'schemas', 'Plant.yaml')
  const before = output.length
  writeFileSync(plant, readFileSync(plant, 'utf8').replace('required:\n  - name\n', 'required:\n  - name\n  - tag\n'))
  const refused = await create(await listening(before), 2)
  t.equal(refused.status, 400, 'the restarted service reads the changed file')
  t.match(await refused.json(), { message: /tag/ })
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
