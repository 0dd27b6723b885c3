import { execFile } from 'node:child_process'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import ts from 'typescript'
import { buildTestApp, testConfig, TOKEN } from '../helpers/app.js'

// The README's "Calling it from another program", run as written against a live instance: the
// one copy of the consumer's code. Only the address changes, to the instance's.

const root = fileURLToPath(new URL('../../', import.meta.url))
const README_ADDRESS = 'http://127.0.0.1:3000'
// Never a synchronous spawn: the instance answers from this very process.
const exec = promisify(execFile)

/** The section's code blocks, by language. */
function readmeBlocks (): { sh: string, ts: string } {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const section = readme.split('\n## ').find((s) => s.startsWith('Calling it from another program'))!
  const block = (lang: string) => new RegExp('```' + lang + '\\n([^]*?)```').exec(section)![1]
  return { sh: block('sh'), ts: block('ts') }
}

t.test('a client generates its types from the served document and calls the API with openapi-fetch', async (t) => {
  // The type-check below is synchronous and holds this process's event loop for seconds under a
  // loaded CI machine: the in-process service must not read that as overload and shed.
  const app = await buildTestApp(t, await testConfig(t, { maxEventLoopDelay: 0 }))
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const dir = t.testdir({ 'package.json': '{"type":"module"}' })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const { sh, ts: client } = readmeBlocks()

  // The shell block: generate the types (npx runs the project's own openapi-typescript here;
  // openapi-fetch is already installed).
  const generate = sh.split('\n').find((line) => line.startsWith('npx openapi-typescript '))!
  const [, ...args] = generate.replace(README_ADDRESS, base).split(' ').slice(1)
  await exec(join(root, 'node_modules/.bin/openapi-typescript'), args, { cwd: dir })
  t.match(readFileSync(join(dir, 'plant-store.d.ts'), 'utf8'), /"\/plants": \{/)

  // The TypeScript block: it compiles against the generated types...
  writeFileSync(join(dir, 'client.ts'), client.replace(README_ADDRESS, base))
  const program = ts.createProgram([join(dir, 'client.ts')], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: ['node'], typeRoots: [join(root, 'node_modules/@types')], skipLibCheck: true })
  t.same(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], 'the snippet type-checks')

  // ...and runs: a create, a replay, then a wrong token.
  const run = async (token: string) => (await exec(process.execPath, ['--import', 'tsx', 'client.ts'], { cwd: dir, env: { PATH: process.env.PATH, PLANT_STORE_TOKEN: token } })).stdout
  t.equal(await run(TOKEN), 'stored Boston fern indoor\n')
  t.equal(await run(TOKEN), 'stored Boston fern indoor\n', 'the same plant again is a safe retry')
  t.equal(await run('not-the-token-0123456789'), '401 Invalid bearer token\n', 'errors arrive typed as the contract\'s Error')
})
