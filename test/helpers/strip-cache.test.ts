import { execFile } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

// The test run's cache of stripped modules (strip-cache.mjs), preloaded on Node 22: a module runs
// as Node's own stripping makes it, silently, and the next process reads what the first kept.
const hook = fileURLToPath(new URL('./strip-cache.mjs', import.meta.url))
const folder = fileURLToPath(new URL('../../node_modules/.cache/stripped-ts/', import.meta.url))
const kept = (source: string): string => join(folder, `${createHash('sha256').update(process.version).update('\0').update(source).digest('hex')}.js`)

/** Runs `file` under the hook alone (not the test run's preloads). */
const run = (file: string) => promisify(execFile)(process.execPath, ['--import', hook, file], { timeout: 20_000, env: { ...process.env, NODE_OPTIONS: '' } })

t.test('a module runs as stripped, kept by its source; the next process reads what was kept', async (t) => {
  // A source no other run has had: its stripped form is not kept yet.
  const source = `const greeting: string = 'stripped ${randomUUID()}'\nconsole.log(greeting.split(' ')[0] as string)\n`
  const dir = t.testdir({ 'package.json': '{"type":"module"}', 'main.ts': source })
  const first = await run(join(dir, 'main.ts'))
  t.equal(first.stdout, 'stripped\n')
  t.equal(first.stderr, '', 'nothing said of an experimental feature')
  const stripped = readFileSync(kept(source), 'utf8')
  t.equal(stripped.length, source.length, 'types blanked where they stood: lines and columns as in the source')
  t.notMatch(stripped, /: string|as string/)

  writeFileSync(kept(source), "console.log('read from the cache')\n")
  t.equal((await run(join(dir, 'main.ts'))).stdout, 'read from the cache\n')
})

t.test('TypeScript in node_modules is left to Node, which refuses it', async (t) => {
  const dir = t.testdir({
    'package.json': '{"type":"module"}',
    'main.mjs': "import 'dependency'\n",
    node_modules: { dependency: { 'package.json': '{"type":"module","exports":"./index.ts"}', 'index.ts': 'export const x: number = 1\n' } }
  })
  const refused = await run(join(dir, 'main.mjs')).then(() => 'ran', (error: { stderr: string }) => error.stderr)
  t.match(refused, /ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING/)
})
