import Database from 'better-sqlite3'
import { chownSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { amongCreates, createLog, createUntil, expectConflicts, expectStored } from '../helpers/durability.ts'
import { postgresUser, startEmbeddedPostgres } from '../helpers/embedded-postgres.ts'
import { findLazyFs, mountLazyFs, type Mount } from '../helpers/lazyfs.ts'
import { waitFor } from '../helpers/proc.ts'
import { startServer } from '../helpers/server-process.ts'
import { spawnGroup } from '../helpers/children.ts'

// "A 200 means durable", tested against power loss: the database lives on LazyFS, and each round
// kills it at a random moment under concurrent creates, then drops every write that was not
// fsynced, as a power cut does. Every acknowledged plant must survive. A control shows that the
// same cut does lose data that was acknowledged without an fsync, so the test can see loss.
// POWER_CUT_ROUNDS sets the rounds per store (5: each cut comes with hundreds of creates under
// way, and the control loses every unsynced row to one cut, so a store that answered before its
// sync would fail the first round). See lazyfs.ts for where LazyFS comes from.

const TOKEN = 'power-loss-token-0123456789'
const ROUNDS = Number(process.env.POWER_CUT_ROUNDS ?? 5)
const root = fileURLToPath(new URL('../../', import.meta.url))

// A random moment to cut: some batches committed, many under way.
const CUT_SPREAD_MS = 450

// Building LazyFS the first time (and installing its build packages) takes a while.
t.setTimeout(10 * 60_000)
const lazyfs = findLazyFs()

if (lazyfs !== undefined) {
  t.test(`SQLite: ${ROUNDS} power cuts under concurrent creates`, async (t) => {
    const mount = await mountLazyFs(t, lazyfs)
    const file = join(mount.dir, 'plants.db')
    const databaseUrl = `sqlite:${file}`
    const env = { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }
    const cwd = t.testdir()
    const log = createLog()
    // Checked while a server holds the database open: a clean close would delete SQLite's -shm
    // file, and LazyFS now and then refuses to reopen one recreated after a cut
    // (SQLITE_IOERR_SHMOPEN, seen only under LazyFS).
    const expectRecovered = async (what: string): Promise<void> => {
      const db = new Database(file)
      t.equal(db.pragma('integrity_check', { simple: true }), 'ok', `${what}: integrity_check`)
      db.close()
      await expectStored(t, databaseUrl, log.acked, what)
    }

    let server = startServer(t, env, cwd)
    for (let round = 1; round <= ROUNDS; round++) {
      const { url } = await server.listening
      const run = { cut: false }
      const load = createUntil(url, TOKEN, log, () => run.cut)
      await amongCreates(t, log, CUT_SPREAD_MS, `round ${round}: the cut`)
      run.cut = true
      server.child.kill('SIGKILL')
      t.equal(await server.exited, null, `round ${round}: killed, then the power cut`)
      await load
      await mount.cut()

      server = startServer(t, env, cwd) // recovers from what the cut left
      await server.listening
      await expectRecovered(`after cut ${round}`)
    }
    t.same([...log.statuses.keys()], [200], 'every answer before a cut was a 200')

    await expectConflicts(t, (await server.listening).url, TOKEN, log.acked)
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0)
  })

  t.test(`PostgreSQL: ${ROUNDS} power cuts of the database under concurrent creates`, async (t) => {
    // PostgreSQL runs as its own user and insists on owning its data directory: LazyFS lets it in,
    // and the directory is made for it (initdb fills an empty one).
    const user = await postgresUser()
    const mount = await mountLazyFs(t, lazyfs, { shared: user !== undefined })
    const dataDir = join(mount.dir, 'data')
    mkdirSync(dataDir, { mode: 0o700 })
    if (user !== undefined) chownSync(dataDir, user.uid, user.gid)
    const database = await startEmbeddedPostgres({ dataDir })
    t.teardown(database.destroy)
    const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: database.url, LOG_LEVEL: 'fatal', PG_POOL_SIZE: '4' })
    const { url } = await server.listening
    const log = createLog()

    for (let round = 1; round <= ROUNDS; round++) {
      const run = { cut: false }
      const load = createUntil(url, TOKEN, log, () => run.cut)
      await amongCreates(t, log, CUT_SPREAD_MS, `round ${round}: the cut`)
      await database.kill() // every PostgreSQL process at once: no shutdown, no checkpoint
      await mount.cut()
      run.cut = true
      await load // answers while the database was gone are 503s, never acknowledgements
      await database.start() // crash recovery, from what was synced
      await expectStored(t, database.url, log.acked, `round ${round}`)
    }
    t.same([...log.statuses.keys()].filter((s) => s !== 200 && s !== 503), [], 'only 200s and 503s')

    // The service never restarted: its pool came back by itself.
    await expectConflicts(t, url, TOKEN, log.acked)
  })

  t.test('control: acknowledged without an fsync (SQLite, synchronous=OFF), rows are lost to the same cut', async (t) => {
    const mount: Mount = await mountLazyFs(t, lazyfs)
    const file = join(mount.dir, 'control.db')
    // Straight through the driver, not a production setting: one row per transaction, each
    // acknowledged on stdout once its commit returned.
    const writer = spawnGroup(process.execPath, ['-e', `
      const db = new (require('better-sqlite3'))(${JSON.stringify(file)})
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = OFF')
      db.exec('CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL)')
      const insert = db.prepare('INSERT INTO plants (id, name) VALUES (?, ?)')
      // A full pipe answers EAGAIN (this test process busy): write again until it takes the line.
      const ack = (line) => { for (;;) { try { return require('fs').writeSync(1, line) } catch (err) { if (err.code !== 'EAGAIN') throw err } } }
      for (let id = 1; ; id++) { insert.run(id, 'plant ' + id); ack(id + '\\n') }
    `], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    // writeSync above: the loop never yields, so once the pipe was full for a moment (this test
    // process busy), process.stdout.write queued every later line in the writer, never sent.
    const exited = new Promise((resolve) => writer.once('exit', resolve))
    let output = ''
    writer.stdout.on('data', (chunk) => { output += chunk })
    const lines = (): number => output.split('\n').length - 1 // whole lines only
    await waitFor(() => lines() >= 2000 || writer.exitCode !== null, 60_000, 'the writer acknowledging 2,000 rows', () => [writer.pid!])
    writer.kill('SIGKILL')
    await exited
    const acked = Math.max(...output.trim().split('\n').map(Number))
    await mount.cut()

    let found: number
    try {
      const db = new Database(file)
      found = Number(db.prepare('SELECT count(*) AS n FROM plants').pluck().get())
      db.close()
    } catch {
      found = 0 // the table itself, or the whole file, was never synced
    }
    t.ok(acked >= 2000, `${acked} rows acknowledged`)
    t.ok(found < acked, `the cut lost ${acked - found} of them (${found} left): the test can see loss`)
  })
}
