import Database from 'better-sqlite3'
import t from 'tap'
import { assertError, buildTestApp, openStoreOf, post, testConfig } from './helper.js'

// A locked SQLite file: 503 in the Error shape, nothing written, and recovery by itself once the
// lock is gone. (A dropped PostgreSQL connection is test/readiness.test.ts.)
t.test('SQLite locked by another writer', async (t) => {
  const config = await testConfig(t)
  if (!config.databaseUrl.startsWith('sqlite:')) return
  const app = await buildTestApp(t, config)
  t.equal((await post(app, { id: 1, name: 'Before' })).statusCode, 200)

  const other = new Database(config.databaseUrl.slice('sqlite:'.length))
  t.teardown(() => { if (other.open) other.close() })
  other.exec('BEGIN IMMEDIATE') // holds the write lock past our busy timeout (250 ms)
  const blocked = await post(app, { id: 2, name: 'During' })
  assertError(t, blocked, 503, /^The store is unavailable, try again later$/)
  other.exec('ROLLBACK')
  other.close()

  const store = await openStoreOf(t, config.databaseUrl)
  t.equal(await store.get(2n), undefined, 'nothing was written')
  const retry = await post(app, { id: 2, name: 'During' })
  t.equal(retry.statusCode, 200, 'the retry succeeds once the lock is gone', { body: retry.body })
  t.same(await store.get(2n), { id: 2n, name: 'During' })
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200)
})
