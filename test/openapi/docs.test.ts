import t from 'tap'
import { parse } from 'yaml'
import { buildTestApp, document, documentText } from '../helpers/app.ts'

const withoutServers = ({ servers: _servers, ...rest }: any) => rest

t.test('/openapi.yaml and /openapi.json describe the instance serving them', async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })

  const yamlRes = await fetch(`${base}/openapi.yaml`)
  t.match(yamlRes.headers.get('content-type'), /^application\/yaml/)
  const yamlText = await yamlRes.text()
  const served = parse(yamlText)
  t.equal(served.servers[0].variables.base_url.default, base)
  t.same(withoutServers(served), withoutServers(parse(documentText)), 'the same document but for servers')
  t.equal(yamlText, documentText.replace('default: http://127.0.0.1:3000', `default: "${base}"`), 'byte for byte but the base_url default')

  const jsonRes = await fetch(`${base}/openapi.json`)
  t.match(jsonRes.headers.get('content-type'), /^application\/json/)
  const json = await jsonRes.json() as any
  t.equal(json.servers[0].variables.base_url.default, base)
  t.same(withoutServers(json), withoutServers(document))
  t.equal(document.servers[0].variables.base_url.default, 'http://127.0.0.1:3000', 'the loaded document is not mutated')

  const other = await app.inject({ url: '/openapi.json', headers: { host: 'plants.example:8443' } })
  t.equal(other.json().servers[0].variables.base_url.default, 'http://plants.example:8443', 'follows the address the client used')
})

t.test('/docs serves Swagger UI from local assets only', async (t) => {
  const app = await buildTestApp(t)
  const page = await app.inject({ url: '/docs/' })
  t.equal(page.statusCode, 200)
  t.match(page.body, /swagger-ui/i)
  const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
  t.ok(sources.length > 0)
  for (const source of sources) {
    t.notMatch(source, /^(https?:)?\/\//, `${source} is local`)
    const asset = await app.inject({ url: new URL(source, 'http://x/docs/').pathname })
    t.equal(asset.statusCode, 200, `${source} is served`)
  }
  const init = await app.inject({ url: '/docs/static/swagger-initializer.js' })
  t.match(init.body, /"validatorUrl":null/, 'no call to the public validator service')
})

t.test("Swagger UI's document points Try it out at the instance serving it", async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const served: any = await (await fetch(`${base}/docs/json`)).json()
  t.equal(served.servers[0].url, '{base_url}')
  t.equal(served.servers[0].variables.base_url.default, base)
  t.same(withoutServers(served), withoutServers(document), 'the rest of the document is unchanged')
})

t.test('the page is titled, has no Explore bar, and keeps authorization', async (t) => {
  const app = await buildTestApp(t)
  t.match((await app.inject({ url: '/docs/' })).body, '<title>Plant Store</title>', 'by the document\'s info.title')
  t.equal(app.documentTitle, 'Plant Store', 'which the start-up line names')
  const retitled = structuredClone(document)
  retitled.info.title = 'Orchard Inventory'
  const other = await buildTestApp(t, undefined, { loaded: { text: '', document: retitled } })
  t.match((await other.inject({ url: '/docs/' })).body, '<title>Orchard Inventory</title>', 'another document: its own title, nothing of plants')
  t.equal(other.documentTitle, 'Orchard Inventory')
  const init = (await app.inject({ url: '/docs/static/swagger-initializer.js' })).body
  t.match(init, /"layout":"BaseLayout"/)
  t.match(init, /"persistAuthorization":true/)
})
