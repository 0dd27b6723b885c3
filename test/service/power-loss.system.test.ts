import Database from 'better-sqlite3'
import pg from 'pg'
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
    const database = await startEmbeddedPostgres({ dataDir, settings: { log_connections: 'on' } })
    t.teardown(database.destroy)
    const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: database.url, LOG_LEVEL: 'warn', PG_POOL_SIZE: '4' })
    const { url } = await server.listening
    const log = createLog()
    // What a round that waits in vain prints: everything needed to tell a service that does not
    // come back from a database that does not.
    let sinceCut = { statuses: new Map<number, number>(), logAt: 0, restartMs: NaN }
    const diagnose = async (): Promise<string> => [
      `PostgreSQL accepted connections ${sinceCut.restartMs.toFixed(0)} ms after its restart; a commit through a connection of the test's now: ${await probeCommit(database.url)}`,
      `the service: ${server.child.exitCode === null && server.child.signalCode === null ? 'running' : `exited (${server.child.exitCode ?? server.child.signalCode})`}; its stderr: ${server.output().stderr.trim().slice(-1000) || '(nothing)'}`,
      `answers since the cut, by status: ${JSON.stringify(Object.fromEntries([...log.statuses].map(([status, n]) => [status, n - (sinceCut.statuses.get(status) ?? 0)])))}; requests whose connection failed, in all: ${log.failed}`,
      `the service's warnings since the cut, by message:\n${tallyLines(server.output().stdout.slice(sinceCut.logAt))}`,
      `its last lines:\n${server.output().stdout.trim().split('\n').slice(-5).join('\n')}`,
      `PostgreSQL's log since its restart:\n${database.log().trim().split('\n').slice(-30).join('\n')}`
    ].join('\n')

    const round = async (n: number): Promise<void> => {
      const run = { cut: false }
      const load = createUntil(url, TOKEN, log, () => run.cut)
      await amongCreates(t, log, CUT_SPREAD_MS, `round ${n}: the cut`)
      sinceCut = { statuses: new Map(log.statuses), logAt: server.output().stdout.length, restartMs: NaN }
      await database.kill() // every PostgreSQL process at once: no shutdown, no checkpoint
      await mount.cut()
      run.cut = true
      await load // answers while the database was gone are 503s, never acknowledgements
      if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`round ${n}: the service exited when the database went`)
      const restarting = performance.now()
      await database.start() // crash recovery, from what was synced
      sinceCut.restartMs = performance.now() - restarting
      await expectStored(t, database.url, log.acked, `round ${n}`)
    }
    for (let n = 1; n <= ROUNDS; n++) {
      try {
        await round(n)
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${await diagnose()}`, { cause: err })
      }
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

/** Whether the database takes a commit now, through a connection of its own (bounded). */
async function probeCommit (databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000, query_timeout: 5000 })
  client.on('error', () => {})
  const began = performance.now()
  try {
    await client.connect()
    await client.query('SELECT txid_current()') // an xid, so its commit waits for a WAL flush
    return `taken in ${(performance.now() - began).toFixed(0)} ms`
  } catch (err) {
    return `refused after ${(performance.now() - began).toFixed(0)} ms: ${(err as Error).message}`
  } finally {
    await client.end().catch(() => {})
  }
}

/** Pino's lines, counted by message and error: what a few thousand of them said. */
function tallyLines (output: string): string {
  const counts = new Map<string, number>()
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue
    let key = line.slice(0, 200)
    try {
      const { msg, err } = JSON.parse(line) as { msg?: string, err?: { type?: string, message?: string, cause?: { message?: string } } }
      key = [msg, err?.type, err?.message, err?.cause?.message].filter((part) => part !== undefined).join(': ')
    } catch {} // not JSON: the line itself
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, n]) => `  ${n} × ${key}`).join('\n') || '  (none)'
}
