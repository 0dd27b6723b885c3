import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { startEmbeddedPostgres, THROWAWAY, type EmbeddedOptions, type EmbeddedServer } from './embedded-postgres.ts'

// Real PostgreSQL for the tests: PG_TEST_URL's server (npm test starts one for the whole run,
// scripts/with-postgres.ts), or else a throwaway server from the embedded-postgres package, on
// 127.0.0.1 and a free port, for the file alone and stopped when it ends.

export type TestPostgres = Omit<EmbeddedServer, 'destroy'>

/** A server of the test's own, which it may stop and start; removed when the file ends. It does not sync (THROWAWAY). */
export async function startPostgres (options: EmbeddedOptions = {}): Promise<TestPostgres> {
  const server = await startEmbeddedPostgres({ ...options, settings: { ...THROWAWAY, ...options.settings } })
  t.teardown(server.destroy)
  return server
}

let shared: Promise<string> | undefined
const made: string[] = []

/** Runs statements in turn on one connection to `url`; answers the last one's rows. */
export async function sql (url: string, ...statements: string[]): Promise<any[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    let rows: any[] = []
    for (const statement of statements) rows = (await client.query(statement)).rows
    return rows
  } finally {
    await client.end()
  }
}

/** A new, empty database on PG_TEST_URL's server, or the file's own; on a server of the run's, dropped when the file ends. */
export async function freshDatabaseUrl (): Promise<string> {
  if (shared === undefined) {
    const given = process.env.PG_TEST_URL
    shared = given !== undefined ? Promise.resolve(given) : startPostgres().then((server) => server.url)
    // What a file made on a server it shares, it removes (FORCE: a connection it left open does not hold it up).
    if (given !== undefined) t.teardown(async () => { for (const name of made.splice(0)) await sql(given, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) })
  }
  const url = new URL(await shared)
  const name = `plants_test_${randomUUID().replaceAll('-', '')}`
  await sql(url.href, `CREATE DATABASE ${name}`)
  made.push(name)
  url.pathname = `/${name}`
  return url.href
}
