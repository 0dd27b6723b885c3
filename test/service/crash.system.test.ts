import t from 'tap'
import { amongCreates, createLog, createUntil, expectConflicts, expectStored } from '../helpers/durability.ts'
import { freshDatabase } from '../helpers/app.ts'
import { startServer } from '../helpers/server-process.ts'

// A 200 means stored: kill -9 the server at a random moment under concurrent creates, restart it
// on the same database, and every acknowledged plant must be there. CRASH_ROUNDS sets the kills
// per store; the default gives 20 in all (12 on SQLite, 8 on PostgreSQL). A SIGKILL leaves the
// OS's page cache intact: power loss is test/service/power-loss.system.test.ts.
const TOKEN = 'crash-test-token-0123456789'
// 20 starts and kills take about 50 s on a quiet machine, and 90 s were seen in CI: more than
// tap's 120 s a file would leave room for.
t.setTimeout(4 * 60_000)
const ROUNDS = { sqlite: Number(process.env.CRASH_ROUNDS ?? 12), postgres: Number(process.env.CRASH_ROUNDS ?? 8) }

for (const backend of ['sqlite', 'postgres'] as const) {
  t.test(`${backend}: ${ROUNDS[backend]} rounds of SIGKILL under load`, async (t) => {
    const databaseUrl = await freshDatabase(t, backend)
    const cwd = t.testdir()
    const env = { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }
    const log = createLog()

    for (let round = 1; round <= ROUNDS[backend]; round++) {
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
