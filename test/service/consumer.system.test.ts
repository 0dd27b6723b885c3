import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import ts from 'typescript'
import { buildTestApp, openStoreOf, testConfig, TOKEN } from '../helpers/app.ts'

// The README's "Calling it from a program", run as written against a live instance: the one copy
// of the consumer's code. Only the address changes, to the instance's; the packages it installs
// are the project's own (linked), so the test needs no network.

const root = fileURLToPath(new URL('../../', import.meta.url))
const README_ADDRESS = 'http://127.0.0.1:3000'
// Never a synchronous spawn: the instance answers from this very process.
const exec = promisify(execFile)

/** The section's shell commands, and each file it gives: a `name`: line, then its code block. */
function readmeSection (): { sh: string, files: Map<string, string> } {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const section = readme.split('\n## ').find((s) => s.startsWith('Calling it from a program'))!
  const files = new Map([...section.matchAll(/^`([\w.-]+)`:\n\n```\w+\n([^]*?)```/gm)].map(([, name, code]) => [name, code]))
  return { sh: /```sh\n([^]*?)```/.exec(section)![1], files }
}

/** The packages a file imports, as npm names them (`node:` built-ins and relative imports aside). */
function packagesOf (code: string): string[] {
  return ts.preProcessFile(code, true, true).importedFiles.map(({ fileName }) => fileName)
    .filter((name) => !name.startsWith('.') && !name.startsWith('node:'))
    .map((name) => name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0])
}

t.test('a client generates exact types from the served document and calls the API with openapi-fetch', async (t) => {
  // The type-check below is synchronous and holds this process's event loop for seconds under a
  // loaded CI machine: the in-process service must not read that as overload and shed.
  const config = await testConfig(t, { MAX_EVENT_LOOP_DELAY_MS: '0' })
  const app = await buildTestApp(t, config)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  // Beside the database, which a second t.testdir() would remove.
  const dir = join(t.testdirName, 'client')
  mkdirSync(dir)
  const { sh, files } = readmeSection()
  t.same([...files.keys()].sort(), ['client.ts', 'generate-types.ts', 'tsconfig.json'], 'the section gives its three files')

  // The shell block: `npm init` and `npm pkg` run as written; what it installs must be every
  // package the files import (and Node's types, and tsx to run them), linked here instead.
  const commands = sh.split('\n').map((line) => line.replace(/\s+#.*$/, '')).filter((line) => line.trim() !== '')
  for (const command of commands.filter((line) => !line.startsWith('npm install'))) {
    await exec('bash', ['-c', command], { cwd: dir })
  }
  t.equal(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type, 'module', 'an ES module')
  const installed = commands.filter((line) => line.startsWith('npm install')).join(' ').split(/\s+/).map((word) => word.replace(/@[^@/]*$/, ''))
  const needed = new Set([...files.values()].flatMap(packagesOf).concat(['typescript', 'tsx', '@types/node']))
  t.same([...needed].filter((name) => !installed.includes(name)), [], 'the shell block installs every package the files need')
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  for (const [name, code] of files) writeFileSync(join(dir, name), code.replace(README_ADDRESS, base))

  // generate-types.ts: the types, from the served document, with int64 as number | bigint.
  const tsx = async (file: string, token = '') => (await exec(process.execPath, ['--import', 'tsx', file], { cwd: dir, env: { PATH: process.env.PATH, PLANT_STORE_TOKEN: token } })).stdout
  await tsx('generate-types.ts')
  t.match(readFileSync(join(dir, 'plant-store.d.ts'), 'utf8'), /PlantId: number \| bigint;/, 'ids are typed exactly')

  // tsconfig.json: the files compile under it (`npx tsc`), the client against the generated types.
  const { config: tsconfig } = ts.readConfigFile(join(dir, 'tsconfig.json'), ts.sys.readFile)
  const { options, fileNames } = ts.parseJsonConfigFileContent(tsconfig, ts.sys, dir)
  const program = ts.createProgram(fileNames, options)
  t.same(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'the files type-check')

  // client.ts runs: a create, a replay, then a wrong token. The id beyond 2^53 is stored exactly.
  t.equal(await tsx('client.ts', TOKEN), 'stored Boston fern indoor\n')
  t.equal(await tsx('client.ts', TOKEN), 'stored Boston fern indoor\n', 'the same plant again is a safe retry')
  t.equal(await tsx('client.ts', 'not-the-token-0123456789'), '401 Invalid bearer token\n', 'errors arrive typed as the contract\'s Error')
  const store = await openStoreOf(t, config.store.databaseUrl)
  t.same(await store.get(9007199254740993n), { id: 9007199254740993n, name: 'Boston fern', tag: 'indoor' }, 'id 9007199254740993 is stored exactly')
  t.equal(await store.get(9007199254740992n), undefined, 'and not as its rounded neighbour')
})
