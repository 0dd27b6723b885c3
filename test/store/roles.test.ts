import pg from 'pg'
import t from 'tap'
import { migrate, MIGRATIONS } from '../../src/store/postgres.ts'
import { openStore } from '../../src/store/open.ts'
import { freshDatabaseUrl, sql } from '../helpers/postgres.ts'

// PostgreSQL as operators run it: an owner role migrates (npm run migrate), the service serves
// as a role that may only read and insert, and never runs DDL to start.

/** The same server and database, as another role. */
const as = (url: string, role: string): string => {
  const other = new URL(url)
  other.username = role
  other.password = `${role}-password`
  return other.href
}

/** A fresh database owned by a role `owner`, and a role `app` that may connect and read its schema, and nothing more yet. */
async function ownedDatabase () {
  const url = await freshDatabaseUrl()
  const database = new URL(url).pathname.slice(1)
  const suffix = database.slice(-12)
  const owner = `owner_${suffix}`
  const app = `app_${suffix}`
  await sql(url,
    `CREATE ROLE ${owner} LOGIN PASSWORD '${owner}-password'`,
    `CREATE ROLE ${app} LOGIN PASSWORD '${app}-password'`,
    `ALTER DATABASE ${database} OWNER TO ${owner}`,
    `ALTER SCHEMA public OWNER TO ${owner}`,
    'REVOKE ALL ON SCHEMA public FROM PUBLIC',
    `GRANT CONNECT ON DATABASE ${database} TO ${app}`,
    `GRANT USAGE ON SCHEMA public TO ${app}`)
  return { url, owner: as(url, owner), app: as(url, app), appRole: app }
}

t.test('migrated by its owner, the database is served by a role with only SELECT and INSERT', async (t) => {
  const { owner, app, appRole } = await ownedDatabase()
  const migrator = await openStore(owner, { pgPoolSize: 1 })
  await migrator.close()
  await sql(owner, `GRANT SELECT, INSERT ON plants, schema_migrations TO ${appRole}`)

  const store = await openStore(app, { pgPoolSize: 2 })
  t.teardown(() => store.close())
  t.equal(await store.create({ id: 1n, name: 'Fern' }), 'created')
  t.same(await store.get(1n), { id: 1n, name: 'Fern' })
  // So it started without DDL: PostgreSQL checks CREATE on the schema even for IF NOT EXISTS.
  await t.rejects(sql(app, 'CREATE TABLE IF NOT EXISTS schema_migrations (version int)'), { code: '42501' }, 'the role may not change the schema')
})

t.test('a database behind the service\'s version stops a role that may not migrate it, naming npm run migrate', async (t) => {
  const { owner, app, appRole } = await ownedDatabase()
  await t.rejects(openStore(app, { pgPoolSize: 1 }), /^the database is at schema version 0, behind this service's \d+, and this role may not migrate it \(permission denied for schema public\): run `npm run migrate` as a role that may, with MIGRATE_DATABASE_URL$/)

  const migrator = await openStore(owner, { pgPoolSize: 1 })
  await migrator.close()
  await sql(owner, `GRANT SELECT, INSERT ON plants, schema_migrations TO ${appRole}`)
  const store = await openStore(app, { pgPoolSize: 1 })
  t.equal(await store.create({ id: 2n, name: 'Ivy' }), 'created', 'once migrated, it serves')
  await store.close()
})

t.test('a fresh database owned by the service\'s role is migrated at start, by any number of instances at once', async (t) => {
  const url = await freshDatabaseUrl()
  const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(url, { pgPoolSize: 1 })))
  for (const store of stores) await store.close()
  t.same(await sql(url, 'SELECT version FROM schema_migrations ORDER BY version'), MIGRATIONS.map((_, i) => ({ version: i + 1 })), 'each migration once')
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  await migrate(pool)
  await pool.end()
  t.pass('migrating a database at its version changes nothing')
})
