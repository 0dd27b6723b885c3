import t from 'tap'
import { AUTH, buildTestApp, openStoreOf, post, testConfig, assertError } from '../helpers/app.ts'

t.test('creates a plant and answers it without its id', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const res = await post(app, { id: 1, name: 'Boston fern', tag: 'indoor' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'Boston fern', tag: 'indoor' })
  t.notOk('id' in res.json(), 'no id in the answer')
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(1n), { id: 1n, name: 'Boston fern', tag: 'indoor' })
})

t.test('an Accept the answer does not fit is disregarded: the contract declares no 406, so the plant is stored and answered as JSON', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const res = await post(app, { id: 4, name: 'Monstera' }, { ...AUTH, 'content-type': 'application/json', accept: 'text/html' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.same(res.json(), { name: 'Monstera' })
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(4n), { id: 4n, name: 'Monstera' })
})

t.test('a plant without a tag stores no tag', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const res = await post(app, { id: 2, name: 'Cactus' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'Cactus' })
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(2n), { id: 2n, name: 'Cactus' })
})

t.test('unknown properties are accepted and not stored', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const res = await post(app, { id: 3, name: 'Ivy', colour: 'green', nested: { a: 1 } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'Ivy' })
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(3n), { id: 3n, name: 'Ivy' })
})

t.test('an identical replay answers 200 and writes nothing twice; different content answers 409', async (t) => {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const plant = { id: 4, name: 'Monstera', tag: 'big' }
  t.equal((await post(app, plant)).statusCode, 200)
  const replay = await post(app, plant)
  t.equal(replay.statusCode, 200)
  t.same(replay.json(), { name: 'Monstera', tag: 'big' })
  assertError(t, await post(app, { ...plant, name: 'Other' }), 409, /Plant 4 already exists/)
  assertError(t, await post(app, { id: 4, name: 'Monstera' }), 409, /different name or tag/)
  assertError(t, await post(app, { ...plant, tag: '' }), 409)
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(4n), { id: 4n, name: 'Monstera', tag: 'big' }, 'the first plant is kept')
})

t.test('plants persist across a restart on the same file', async (t) => {
  const config = await testConfig(t)
  const first = await buildTestApp(t, config)
  t.equal((await post(first, { id: 5, name: 'Aloe' })).statusCode, 200)
  await first.close()

  const second = await buildTestApp(t, config)
  assertError(t, await post(second, { id: 5, name: 'Not aloe' }), 409)
  t.equal((await post(second, { id: 5, name: 'Aloe' })).statusCode, 200, 'replay after restart')
  t.same(await (await openStoreOf(t, config.store.databaseUrl)).get(5n), { id: 5n, name: 'Aloe' })
})
