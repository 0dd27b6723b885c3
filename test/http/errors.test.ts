import t from 'tap'
import { assertError, AUTH, buildTestApp, captureLog, dropPlantsTable, openStoreOf, post, testConfig } from '../helpers/app.ts'

t.test('validation failures name the offending field', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  assertError(t, await post(app, { name: 'No id' }), 400, /body must have required property 'id'/)
  assertError(t, await post(app, { id: 1 }), 400, /body must have required property 'name'/)
  assertError(t, await post(app, { id: 1, name: 123 }), 400, /body\/name must be string/)
  assertError(t, await post(app, { id: 1, name: 'Fern', tag: 7 }), 400, /body\/tag must be string/)
  assertError(t, await post(app, { id: 1, name: ['Fern'] }), 400, /body\/name must be string/)
  assertError(t, await post(app, [{ id: 1, name: 'Fern' }]), 400, /body must be object/)
  assertError(t, await post(app, 'null'), 400, /body must be object/)
  assertError(t, await post(app, '"Fern"'), 400, /body must be object/)
  t.equal(await (await openStoreOf(t, config.store.databaseUrl)).get(1n), undefined, 'nothing was stored')
})

t.test('bodies are not coerced', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  assertError(t, await post(app, { id: 1, name: true }), 400, /body\/name must be string/)
  assertError(t, await post(app, { id: 1, name: 'Fern', tag: null }), 400, /body\/tag must be string/)
  t.equal(await (await openStoreOf(t, config.store.databaseUrl)).get(1n), undefined)
})

t.test('malformed and empty JSON', async (t) => {
  const app = await buildTestApp(t)
  assertError(t, await post(app, '{"id": 1, "name": '), 400, /not valid JSON/)
  assertError(t, await post(app, '{"id": 1, "name": "x"} trailing'), 400, /not valid JSON/)
  assertError(t, await post(app, ''), 400, /Request body is empty/)
  assertError(t, await post(app, '   '), 400, /Request body is empty/)
  assertError(t, await post(app, '{"__proto__": {"admin": true}, "id": 1, "name": "x"}'), 400, /forbidden prototype property/)
})

t.test('duplicate keys and deep nesting are refused, whatever the depth of the duplicate', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  assertError(t, await post(app, '{"id":1,"name":"Fern","name":"Ivy"}'), 400, /repeats a key/)
  assertError(t, await post(app, '{"id":1,"id":2,"name":"Fern"}'), 400, /repeats a key/)
  assertError(t, await post(app, '{"id":1,"name":"Fern","x":[{"a":1,"a":1}]}'), 400, /repeats a key/)
  assertError(t, await post(app, '{"id":9007199254740993,"name":"Fern","id":9007199254740993}'), 400, /repeats a key/)
  t.equal((await post(app, '{"id":1,"name":"a:b \\" : {[","x":{"y":[1,{"z":":"}]}}')).statusCode, 200, 'colons and brackets inside strings do not count')
  const deep = (n: number) => `{"id":2,"name":"Fern","x":${'['.repeat(n)}${']'.repeat(n)}}`
  t.equal((await post(app, deep(31))).statusCode, 200, '32 levels is fine')
  assertError(t, await post(app, deep(32)), 400, /nests deeper than 32 levels/)
  assertError(t, await post(app, deep(500_000)), 400, /nests deeper than 32 levels/)
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(1n), { id: 1n, name: 'a:b " : {[' })
})

t.test('a wrong or missing content type answers 415', async (t) => {
  const app = await buildTestApp(t)
  const body = JSON.stringify({ id: 1, name: 'Fern' })
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    assertError(t, await post(app, body, { ...AUTH, 'content-type': type }), 415, new RegExp(`Unsupported Media Type: ${type}; send application/json`))
  }
  assertError(t, await post(app, body, { ...AUTH }), 415, /Unsupported Media Type: none; send application\/json/)
  const ok = await post(app, body, { ...AUTH, 'content-type': 'application/json; charset=utf-8' })
  t.equal(ok.statusCode, 200, 'application/json with a charset is JSON')
})

t.test('a body over 1 MiB answers 413', async (t) => {
  const app = await buildTestApp(t)
  const BODY_LIMIT = 1024 * 1024
  const name = 'x'.repeat(BODY_LIMIT)
  assertError(t, await post(app, { id: 1, name }), 413, /too large/)
  const fits = await post(app, { id: 1, name: 'x'.repeat(BODY_LIMIT - 100) })
  t.equal(fits.statusCode, 200, 'just under the limit is fine')
})

t.test('unknown routes answer 404', async (t) => {
  const app = await buildTestApp(t)
  assertError(t, await app.inject({ method: 'GET', url: '/nope' }), 404, /GET \/nope not found/)
  assertError(t, await app.inject({ method: 'DELETE', url: '/plants/1/below', headers: AUTH }), 404, /DELETE \/plants\/1\/below not found/)
  // A known path with an undeclared method is a 405: see test/openapi/methods.test.ts.
})

t.test('an unexpected fault answers a generic 500 and logs the detail', async (t) => {
  const config = await testConfig(t, { LOG_LEVEL: 'error' })
  const { logStream, raw } = captureLog()
  const app = await buildTestApp(t, config, { logStream })
  await dropPlantsTable(config.store.databaseUrl)
  const res = await post(app, { id: 1, name: 'Fern' })
  assertError(t, res, 500, /^Internal Server Error$/)
  t.notMatch(res.body, /plants|sqlite|table/i, 'no internals in the body')
  t.match(raw.join(''), /no such table: plants|relation \\"plants\\" does not exist/, 'the detail is logged (JSON-escaped)')
})

t.test('a fault in serializing an answer is logged with what names it, not the route\'s config', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { errorHandler, plainError } = await import('../../src/http/error-handler.ts')
  const { logStream, raw } = captureLog()
  const app = Fastify({ logger: { stream: logStream } })
  t.teardown(() => app.close())
  app.setErrorHandler(errorHandler(() => plainError))
  // Fastify hangs the route's config on a serializer's error; the engine's holds the whole operation.
  const operation = { examples: 'x'.repeat(20_000) }
  app.get('/count', { schema: { response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } } }, config: { operation } }, async () => ({ n: 'not a number' }))
  const res = await app.inject({ url: '/count' })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 500, message: 'Internal Server Error' })
  const line = raw.find((each) => each.includes('request failed'))
  t.ok(line !== undefined && line.length < 4000, `one line of ${line?.length} characters`)
  t.match(JSON.parse(line!).err, { serialization: 'GET /count', message: /cannot be converted to an integer/ }, 'the route named, and why')
})
