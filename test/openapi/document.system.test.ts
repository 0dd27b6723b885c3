import { cpSync, copyFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { dump } from 'js-yaml'
import { builtBundle } from '../helpers/bundle.ts'
import { document as plantStore } from '../helpers/app.ts'
import { startServer, postPlant } from '../helpers/server-process.ts'
import { splitDocument } from '../helpers/split-document.ts'
import { shop } from './fixtures/shop.ts'

// The service and the mock as processes, on documents of a test's own: the service reads
// openapi.yaml beside its source, so each case runs a copy of the source beside its document.
// A document that cannot be served stops the start with one line naming the file and the JSON
// pointer, exit 1, no stack trace; a split one is served as the whole.

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'document-test-token-0123456789abcdef'

/** A copy of the service's source with `write` making its openapi.yaml; the service, run from it. */
function serviceWith (t: Test, write: (dir: string) => void) {
  const dir = t.testdir()
  cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true })
  for (const linked of ['node_modules', 'generated']) symlinkSync(join(root, linked), join(dir, linked))
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
  write(dir)
  return startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` }, dir, [], { env: {}, args: [join(dir, 'src/server.ts')] })
}

t.test('the service refuses a document it cannot serve: one line naming the file and the place, exit 1', async (t) => {
  const broken = structuredClone(plantStore)
  broken.paths['/plants'].post.requestBody.content['application/json'].schema = { $ref: '#/components/schemas/Nowhere' }
  broken.paths['/plants'].post.parameters = [{ name: 'q', in: 'query', style: 'matrix', schema: { type: 'string' } }]
  const server = serviceWith(t, (dir) => writeFileSync(join(dir, 'openapi.yaml'), dump(broken)))
  t.equal(await server.exited, 1)
  t.equal(server.output().stderr, 'Plant Store cannot start: openapi.yaml#/paths/~1plants/post/parameters/0: POST /plants is parameter q with style matrix, which a query parameter cannot have (form, spaceDelimited, pipeDelimited, deepObject)\n', 'one line, no stack trace')
})

t.test('the service serves a document split over files as the whole', async (t) => {
  const server = serviceWith(t, (dir) => splitDocument(plantStore, dir))
  const { url } = await server.listening
  const created = await postPlant(url, TOKEN, '{"id":1,"name":"Fern"}')
  t.equal(created.status, 200)
  t.same(await created.json(), { name: 'Fern' })
  const invalid = await postPlant(url, TOKEN, '{"id":2}')
  t.same(await invalid.json(), { error: 400, message: 'body must have required property \'name\'' }, 'validated by the schemas of its other files')
  const served = await (await fetch(`${url}/openapi.json`)).json() as typeof plantStore
  t.same(served.components.schemas.Plant.properties, plantStore.components.schemas.Plant.properties, 'one self-contained document')
})

t.test('npm run mock: serves what it can, names what it leaves out; a document it cannot read, or a bad configuration, stops it with a clear message', async (t) => {
  const mockCommand = { ...await builtBundle(), args: [join(root, 'dist/cli/mock.js')] }
  const dir = t.testdir()
  const file = join(dir, 'api.yaml')
  writeFileSync(file, dump({ ...structuredClone(plantStore), paths: { ...plantStore.paths, '/#X-Amz-Target=Plants.List': { post: { responses: { 200: { description: 'ok' } } } } } }))
  const mock = startServer(t, { LOG_LEVEL: 'warn' }, dir, [], { env: {}, args: [...mockCommand.args, file] })
  const listening = new Promise<string>((resolve) => mock.child.stdout!.on('data', () => { const url = /listening on (\S+)/.exec(mock.output().stdout)?.[1]; if (url !== undefined) resolve(url) }))
  const url = await listening
  t.match(mock.output().stdout, '1 operation(s) left out, named in the log')
  const created = await postPlant(url, 'any-bearer-token', '{"id":1,"name":"Fern"}')
  t.equal(created.status, 200, 'the Plant Store\'s own document, mocked')
  t.same(await created.json(), { name: 'Boston fern', tag: 'indoor' }, 'answered with its example')
  t.equal((await postPlant(url, '', '{"id":1,"name":"Fern"}')).status, 401, 'its security: a bearer token, in form')
  mock.child.kill('SIGTERM')
  await mock.exited
  t.equal(mock.output().stdout.split('\n').filter((line) => line.includes('left out')).length, 2, 'named once in the log, once in the banner')

  writeFileSync(join(dir, 'bad.yaml'), 'openapi: 3.1.0\ninfo: {title: x, version: "1"}\npaths:\n  /a:\n    $ref: "./nowhere.yaml"\n')
  const bad = startServer(t, {}, dir, [], { env: {}, args: [...mockCommand.args, join(dir, 'bad.yaml')] })
  t.equal(await bad.exited, 1)
  t.match(bad.output().stderr, /^The mock cannot start: .*bad\.yaml#\/paths\/~1a: has a \$ref that cannot be resolved: ENOENT[^\n]*\n$/, 'one line, naming the file and the place')

  const misconfigured = startServer(t, { PORT: 'eighty' }, dir, [], { env: {}, args: [...mockCommand.args, file] })
  t.equal(await misconfigured.exited, 1)
  t.equal(misconfigured.output().stderr, 'Invalid configuration:\n  - PORT must be an integer from 0 to 65535, got "eighty"\n', 'a configuration it cannot run on: every problem named, as the service names them')
})

t.test('npm run mock remembers by default, prints what, forgets on POST /__mock/reset; --stateless answers from the document alone', async (t) => {
  const mockCommand = { ...await builtBundle(), args: [join(root, 'dist/cli/mock.js')] }
  const dir = t.testdir()
  const file = join(dir, 'shop.yaml')
  writeFileSync(file, dump(shop))
  const run = async (extra: string[]) => {
    const mock = startServer(t, { LOG_LEVEL: 'warn' }, dir, [], { env: {}, args: [...mockCommand.args, file, ...extra] })
    const url = await new Promise<string>((resolve) => mock.child.stdout!.on('data', () => { const found = /listening on (\S+)/.exec(mock.output().stdout)?.[1]; if (found !== undefined) resolve(found) }))
    return { mock, url }
  }
  const order = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ item: 'Fern', quantity: 2 }) }
  const { mock, url } = await run([])
  t.match(mock.output().stdout, `Remembers what clients write (reset: POST ${url}/__mock/reset):\n  /orders/{orderId}: orders keyed by id`, 'what it remembers, in the banner')
  const { id } = await (await fetch(`${url}/orders`, order)).json() as { id: number }
  t.equal((await fetch(`${url}/orders/${id}`)).status, 200, 'read back')
  t.equal((await fetch(`${url}/__mock/reset`, { method: 'POST' })).status, 204)
  t.equal((await fetch(`${url}/orders/${id}`)).status, 404, 'forgotten')
  mock.child.kill('SIGTERM')
  t.equal(await mock.exited, 0)

  const stateless = await run(['--stateless'])
  t.match(stateless.mock.output().stdout, 'Stateless: every request answered from the document alone')
  await (await fetch(`${stateless.url}/orders`, order)).arrayBuffer()
  t.equal((await fetch(`${stateless.url}/orders/${id}`)).status, 200, 'any key answered with the example')
  stateless.mock.child.kill('SIGTERM')
  await stateless.mock.exited
})
