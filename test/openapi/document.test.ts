import { once } from 'node:events'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { dump } from 'js-yaml'
import { loadDocument, prebundle } from '../../src/openapi/document/document.ts'
import { bundleDocument } from '../../src/openapi/document/external-refs.ts'
import { document as plantStore } from '../helpers/app.ts'
import { splitDocument } from '../helpers/split-document.ts'

// Reading a document: OpenAPI 3.0 or 3.1, YAML or JSON, one file or several. What cannot be read
// stops with one message naming the file and the JSON pointer.

t.test('what is no OpenAPI 3.0 or 3.1 document is refused, saying why and what to do', async (t) => {
  const dir = t.testdir()
  const file = (name: string, text: string) => { writeFileSync(join(dir, name), text); return join(dir, name) }
  const refused = async (path: string) => await loadDocument(path).then(() => '', (err: Error) => `${err.name}: ${err.message}`)
  t.match(await refused(file('swagger.yaml', 'swagger: "2.0"\ninfo: {title: x, version: "1"}\npaths: {}\n')), /DocumentError: .*swagger.yaml is Swagger 2.0, which is not read here: convert it to OpenAPI 3 first, for example with `npx swagger2openapi swagger.yaml -o openapi.yaml`/)
  t.match(await refused(file('none.yaml', 'title: not an API\n')), /none.yaml is not an OpenAPI document: it has no openapi field/)
  t.match(await refused(file('future.yaml', 'openapi: 4.0.0\n')), /future.yaml is OpenAPI 4.0.0; the versions read are 3.0.x and 3.1.x/)
  t.match(await refused(file('broken.yaml', 'openapi: 3.1.0\ninfo: [unclosed\n')), /broken.yaml is neither YAML nor JSON: /)
  t.match(await refused(join(dir, 'missing.yaml')), /missing.yaml cannot be read: ENOENT/)
  mkdirSync(join(dir, 'schemas'))
  file('schemas/pet.yaml', 'type: object\nproperties:\n  owner:\n    $ref: ./owner.yaml\n')
  t.match(await refused(file('split.yaml', dump({ openapi: '3.1.0', info: { title: 's', version: '1' }, paths: {}, components: { schemas: { Pet: { $ref: './schemas/pet.yaml' } } } }))), /schemas\/pet.yaml#\/properties\/owner: has a \$ref that cannot be resolved: ENOENT/, 'a $ref to a file that is not there: that file and the pointer of the $ref')
})

t.test('a document split over files: bundled into one; the build\'s bundle taken while its files are unchanged', async (t) => {
  const dir = t.testdir()
  const entry = splitDocument(plantStore, dir)
  const loaded = await loadDocument(entry)
  t.same(loaded.document.components.schemas.Plant.properties, plantStore.components.schemas.Plant.properties, 'the whole, from its files')
  t.ok(loaded.files!.length >= 4, 'the files it was read from')
  t.match(loaded.text, /^openapi: 3\.1\.0\n/, 'served as one YAML text')

  const prebundled = join(dir, 'openapi.bundle.json')
  writeFileSync(prebundled, JSON.stringify(prebundle({ ...loaded, document: { ...loaded.document, info: { ...loaded.document.info, title: 'Bundled at build' } } })))
  t.equal((await loadDocument(entry, { prebundled })).document.info.title, 'Bundled at build', 'unchanged files: the build\'s bundle, no bundler')
  writeFileSync(join(dir, 'schemas', 'Plant.yaml'), dump({ type: 'object', properties: { name: { type: 'string' } } }))
  t.equal((await loadDocument(entry, { prebundled })).document.info.title, plantStore.info.title, 'a file changed since: bundled again')
})

t.test('one file: the build\'s reading of it taken while the file is unchanged, so a start parses no YAML', async (t) => {
  const dir = t.testdir()
  const entry = join(dir, 'openapi.yaml')
  writeFileSync(entry, dump(plantStore))
  const loaded = await loadDocument(entry)
  const prebundled = join(dir, 'openapi.bundle.json')
  writeFileSync(prebundled, JSON.stringify(prebundle({ ...loaded, document: { ...loaded.document, info: { ...loaded.document.info, title: 'Read at build' } } })))
  const built = await loadDocument(entry, { prebundled })
  t.equal(built.document.info.title, 'Read at build', 'unchanged: the build\'s')
  t.equal(built.text, loaded.text, 'served as the file is written')
  writeFileSync(entry, dump({ ...plantStore, info: { ...plantStore.info, version: '9.9.9' } }))
  t.equal((await loadDocument(entry, { prebundled })).document.info.version, '9.9.9', 'changed since: read again')
})

t.test('a $ref to a URL: fetched once, at load, and bounded; a host that never answers is named, not waited on', async (t) => {
  const server = createServer((req, res) => {
    if (req.url === '/pet.yaml') res.writeHead(200, { 'content-type': 'application/yaml' }).end('type: object\nproperties:\n  name: {type: string}\n')
    // Anything else: taken, and never answered.
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const dir = t.testdir()
  const entry = (name: string, ref: string) => {
    const path = join(dir, name)
    writeFileSync(path, dump({ openapi: '3.1.0', info: { title: 'r', version: '1' }, paths: {}, components: { schemas: { Pet: { $ref: ref } } } }))
    return path
  }
  const loaded = await loadDocument(entry('remote.yaml', `${base}/pet.yaml`))
  t.same(Object.values(loaded.document.components.schemas).map((schema: any) => schema.properties?.name).filter(Boolean), [{ type: 'string' }], 'brought in')
  const started = Date.now()
  const refused = await bundleDocument(entry('silent.yaml', `${base}/silent.yaml`), 'silent.yaml', { remoteTimeoutMs: 200 }).then(() => '', (err: Error) => `${err.name}: ${err.message}`)
  t.match(refused, /^DocumentError: .*silent\.yaml#\/components\/schemas\/Pet: has a \$ref that cannot be resolved: no answer from http:\/\/127\.0\.0\.1:\d+\/silent\.yaml within 0\.2 s$/)
  t.ok(Date.now() - started < 5000, 'at its bound')
})
