import t from 'tap'
import { parse } from 'yaml'
import { buildTestApp, document, documentText } from './helper.js'

t.test('/openapi.yaml is the file byte for byte; /openapi.json the same document', async (t) => {
  const app = await buildTestApp(t)
  const yaml = await app.inject({ url: '/openapi.yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /^application\/yaml/)
  t.equal(yaml.body, documentText)
  const json = await app.inject({ url: '/openapi.json' })
  t.match(json.headers['content-type'], /^application\/json/)
  t.same(json.json(), parse(documentText))
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
  const { servers: _a, ...rest } = served
  const { servers: _b, ...original } = document
  t.same(rest, original, 'the rest of the document is unchanged')
  t.equal(document.servers[0].variables.base_url.default, 'http://127.0.0.1:3000', 'the loaded document is not mutated')
})
