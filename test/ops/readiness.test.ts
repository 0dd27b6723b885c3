import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { assertError, buildTestApp, post, TOKEN } from '../helpers/app.ts'
import { startPostgres } from '../helpers/postgres.ts'

// The test's own PostgreSQL, which it stops and starts under a running app.
t.test('/readyz and the API follow the database down and back up, by themselves', async (t) => {
  const server = await startPostgres()
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: server.url })
  const app = await buildTestApp(t, config)

  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200, 'ready')
  t.equal((await post(app, { id: 1, name: 'Before' })).statusCode, 200)

  await server.stop()
  assertError(t, await app.inject({ url: '/readyz' }), 503, /store is unavailable/)
  const refused = await post(app, { id: 2, name: 'During' })
  assertError(t, refused, 503, /^The store is unavailable, try again later$/)
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, 'still alive')

  await server.start()
  let ready = 0
  for (let i = 0; i < 50 && ready !== 200; i++, await sleep(100)) {
    ready = (await app.inject({ url: '/readyz' })).statusCode
  }
  t.equal(ready, 200, 'ready again without a restart')
  t.equal((await post(app, { id: 2, name: 'During' })).statusCode, 200, 'the refused create can be retried')
  t.equal((await post(app, { id: 1, name: 'Before' })).statusCode, 200, 'what was stored before is still there')
  assertError(t, await post(app, { id: 1, name: 'Changed' }), 409)
})
