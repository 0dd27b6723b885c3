import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { freshDatabaseUrl } from '../helpers/postgres.ts'

// npm run migrate, as an operator runs it before a rollout: the command as a real process.
const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('npm run migrate applies the migrations without starting the server', async (t) => {
  const migrate = (databaseUrl: string, env: Record<string, string> = {}) => spawnSync(process.execPath, [join(root, 'src/cli/migrate.ts')], {
    cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, ...env }
  })
  const url = await freshDatabaseUrl()
  const first = migrate(url)
  t.equal(first.status, 0, first.stderr)
  t.match(first.stdout, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ is migrated/, 'the password is masked')
  t.equal(migrate(url).status, 0, 'running it again is a no-op')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.same((await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows, [{ version: 1 }])
  await client.end()

  const file = join(t.testdir(), 'plants.db')
  t.equal(migrate(`sqlite:${file}`).status, 0)

  // MIGRATE_DATABASE_URL, the owner's, is the one migrated; the service's DATABASE_URL is not touched.
  const owners = await freshDatabaseUrl()
  const elsewhere = join(t.testdir(), 'untouched', 'plants.db')
  const split = migrate(`sqlite:${elsewhere}`, { MIGRATE_DATABASE_URL: owners })
  t.equal(split.status, 0, split.stderr)
  t.match(split.stdout, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ is migrated/)
  t.notOk(existsSync(elsewhere), 'DATABASE_URL\'s store is left alone')
  // The owner's URL from a file, as a Kubernetes Secret mounts it.
  const secret = join(t.testdir(), 'migrate-url')
  writeFileSync(secret, `${await freshDatabaseUrl()}\n`, { mode: 0o600 })
  const fromFile = migrate(`sqlite:${elsewhere}`, { MIGRATE_DATABASE_URL_FILE: secret })
  t.equal(fromFile.status, 0, fromFile.stderr)
  t.match(fromFile.stdout, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ is migrated/, 'MIGRATE_DATABASE_URL_FILE')
  const bad = migrate('postgres://nobody@127.0.0.1:1/none')
  t.equal(bad.status, 1)
  t.match(bad.stderr, /migration failed/)
})
