import t from 'tap'
import { freshDatabase } from './app.ts'
import { amongCreates, createLog, createUntil, expectConflicts, expectStored } from './durability.ts'
import { startServer } from './server-process.ts'

// A 200 means stored: kill -9 the server at a random moment under concurrent creates, restart it
// on the same database, and every acknowledged plant must be there. One store a file
// (crash-sqlite, crash-postgres), so that each stays within a file's time. CRASH_ROUNDS sets the
// kills; by default 12 on SQLite, 8 on PostgreSQL. A SIGKILL leaves the OS's page cache intact:
// power loss is test/service/power-loss.system.test.ts.

const TOKEN = 'crash-test-token-0123456789'
const DEFAULT_ROUNDS = { sqlite: 12, postgres: 8 }

/** The rounds of SIGKILL under load on one store, as a test of this file. */
export function crashRounds (backend: 'sqlite' | 'postgres'): void {
  const rounds = Number(process.env.CRASH_ROUNDS ?? DEFAULT_ROUNDS[backend])
  // A round's start and kill take about 2.5 s on a quiet machine, and twice that was seen in CI.
  t.setTimeout(3 * 60_000)
  t.test(`${backend}: ${rounds} rounds of SIGKILL under load`, async (t) => {
    const databaseUrl = await freshDatabase(t, backend)
    const cwd = t.testdir()
    const env = { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }
    const log = createLog()

    for (let round = 1; round <= rounds; round++) {
      const server = startServer(t, env, cwd)
      const { url } = await server.listening
      const run = { killed: false }
      const load = createUntil(url, TOKEN, log, () => run.killed)
      await amongCreates(t, log, 250, `round ${round}: the kill`)
      run.killed = true
      server.child.kill('SIGKILL')
      t.equal(await server.exited, null, `round ${round}: killed`)
      await load
    }
    t.same([...log.statuses.keys()], [200], 'every answer before the kill was a 200')
    await expectStored(t, databaseUrl, log.acked, 'after the kills')

    const server = startServer(t, env, cwd)
    const { url } = await server.listening
    await expectConflicts(t, url, TOKEN, log.acked)
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0)
  })
}
