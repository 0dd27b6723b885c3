import t from 'tap'
import { AUTH, buildTestApp, post, testConfig } from '../helpers/app.ts'
import { findPgbouncer, startPgbouncer } from '../helpers/pgbouncer.ts'
import { sql, startPostgres } from '../helpers/postgres.ts'
import { openStore } from '../../src/store/open.ts'

// The service directly and through PgBouncer in transaction pooling, with nothing set per
// session: it migrates (instances at once, once) and serves, and every commit is made with
// synchronous_commit = on even when the database's default says off, so a 200 still means
// flushed to disk.

const binary = findPgbouncer()
// CI installs Debian's pgbouncer (npm test's pretest): there a missing one fails, never skips.
const needsPgbouncer = { skip: binary === undefined && process.env.CI === undefined && 'no pgbouncer (scripts/ensure-tool.sh installs it)' }

for (const through of ['directly', 'through PgBouncer (pool_mode = transaction)']) {
  t.test(`${through}, on a database whose default is synchronous_commit = off`, through === 'directly' ? {} : needsPgbouncer, async (t) => {
    const server = await startPostgres()
    const direct = new URL(server.url)
    direct.pathname = '/plants_commits'
    await sql(server.url, 'CREATE DATABASE plants_commits', 'ALTER DATABASE plants_commits SET synchronous_commit = off')
    let url = direct.href
    if (through !== 'directly') {
      const bouncer = await startPgbouncer(binary!, direct.href)
      t.teardown(bouncer.stop)
      url = bouncer.url
    }

    const starting = await Promise.all(Array.from({ length: 4 }, async () => await openStore(url, { pgPoolSize: 2 })))
    for (const store of starting) await store.close()
    t.same(await sql(direct.href, 'SELECT version FROM schema_migrations'), [{ version: 1 }], 'four instances starting at once migrate it once, with no startup option and no session lock')

    // Each row records the synchronous_commit its transaction commits with.
    await sql(direct.href,
      'CREATE TABLE commit_settings (id int8, synchronous_commit text)',
      'CREATE FUNCTION record_setting () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO commit_settings VALUES (NEW.id, current_setting(\'synchronous_commit\')); RETURN NEW; END $$',
      'CREATE TRIGGER record_setting AFTER INSERT ON plants FOR EACH ROW EXECUTE FUNCTION record_setting()')
    t.same(await sql(direct.href, 'SHOW synchronous_commit'), [{ synchronous_commit: 'off' }], 'a session\'s default is off')

    const app = await buildTestApp(t, await testConfig(t, { DATABASE_URL: url, PG_POOL_SIZE: '4' }))
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => post(app, { id: i + 1, name: `plant ${i + 1}` })))
    t.same([...new Set(answers.map((res) => res.statusCode))], [200], '200 creates, all answered 200')
    t.equal((await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"id":1,"name":"other"}' })).statusCode, 409)
    const settings = await sql(direct.href, 'SELECT synchronous_commit, count(*)::int AS rows FROM commit_settings GROUP BY 1')
    t.same(settings, [{ synchronous_commit: 'on', rows: 200 }], 'every row was committed with synchronous_commit = on')

    // The control: an insert outside the service commits with the default, so the check can see it.
    await sql(direct.href, 'INSERT INTO plants (id, name) VALUES (-1, \'control\')')
    t.same(await sql(direct.href, 'SELECT synchronous_commit FROM commit_settings WHERE id = -1'), [{ synchronous_commit: 'off' }], 'the control commits with off')
  })
}
