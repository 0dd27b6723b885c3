// The SQLite connection, in a worker thread of its own. better-sqlite3 is synchronous: every
// commit, and every WAL checkpoint, waits for the disk. Here it waits off the event loop, which
// keeps parsing, validating and answering meanwhile. sqlite.ts is the other end.
//
// A commit is answered only once the WAL holding it is synced. SQLite would sync inside the
// commit (synchronous=FULL), holding the write lock, so one batch's fsync would hold up the next
// batch's writes. Instead SQLite writes the WAL without syncing (synchronous=NORMAL, which still
// syncs around every checkpoint) and this worker syncs the WAL file itself, in libuv's thread
// pool: the next batch is written while the last one syncs. Replies go out in commit order, each
// after its own sync and every earlier one; a failed sync fails its batch and every later one,
// and ends the worker, since after a failed fsync the OS may no longer hold the unsynced pages.
import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { migrate } from './sqlite-schema.ts'
import { outcomeOver, plantFromRow, type CreateOutcome, type PlantRow, type StoredPlant } from './store.ts'

// Another process holding the write lock: wait briefly, then answer 503 and let the client retry.
const BUSY_TIMEOUT_MS = 250
// While opening, longer: instances (or a copy) that open a new file together each switch it to WAL
// and migrate it, one after the other, and no request waits on that.
const OPEN_BUSY_TIMEOUT_MS = 10_000
const WAL_RETRY_MS = 5
const PAUSE = new Int32Array(new SharedArrayBuffer(4))

// Faults of the file or its lock, not of our SQL: the store is unavailable for now. So is a
// failed system call (the WAL's sync).
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|CANTOPEN|FULL|PROTOCOL)/

/** An error as it crosses to the main thread: structured clone keeps no custom fields. */
export interface WorkerError { message: string, code?: string, unavailable: boolean }

export type WorkerRowResult = CreateOutcome | { error: WorkerError }

/**
 * A batch of plants as it crosses to the worker: three columns, not an object a plant, which
 * structured clone copies for about a fifth less of the whole hand-off's CPU. No tag is null,
 * as in a row.
 */
export interface Columns { ids: bigint[], names: string[], tags: Array<string | null> }

/** What the main thread asks; each request carries an id its reply repeats. */
export type Call =
  | { op: 'commit', plants: Columns }
  | { op: 'get', key: bigint }
  | { op: 'ping' }
  | { op: 'close' }

export type Request = Call & { id: number }

export type Reply =
  | { id: number, ok: true, value?: unknown }
  | { id: number, ok: false, error: WorkerError }

/** The first message: the database is open and migrated, or why it is not. */
export type Opened = { opened: true } | { opened: false, error: WorkerError }

function describe (err: unknown): WorkerError {
  const code = (err as { code?: unknown }).code
  return {
    message: err instanceof Error ? err.message : String(err),
    ...(typeof code === 'string' && { code }),
    unavailable: UNAVAILABLE.test(String(code)) || typeof (err as { syscall?: unknown }).syscall === 'string'
  }
}

/**
 * Puts the file in WAL mode. Switching a new file needs its write lock, and while another
 * connection holds that lock (an instance switching or migrating the same new file, a copy), SQLite
 * answers SQLITE_BUSY at once instead of calling its busy handler, which could deadlock there.
 * So the worker waits here itself, a few milliseconds at a time, until the open's deadline.
 */
function switchToWal (db: Database.Database): void {
  const deadline = Date.now() + OPEN_BUSY_TIMEOUT_MS
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err
      Atomics.wait(PAUSE, 0, 0, WAL_RETRY_MS) // nothing else runs in this worker while it opens
    }
  }
}

function open (path: string) {
  mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`)
  // WAL, synced by commit() below before any reply: a 200 survives power loss.
  switchToWal(db)
  db.pragma('synchronous = NORMAL')
  // Read every INTEGER as bigint, so ids beyond 2^53 come back exact.
  db.defaultSafeIntegers(true)
  migrate(db)
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)

  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const select = db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?')
  const ping = db.prepare('SELECT 1')

  const find = (id: bigint): StoredPlant | undefined => {
    const row = select.get(id)
    return row === undefined ? undefined : plantFromRow(row)
  }
  // One transaction per batch, its rows inserted in arrival order, so the first of two
  // different plants for one id wins. A row that fails fails alone (SQLite undoes just that
  // statement); a failed commit fails the whole batch.
  const write = db.transaction(({ ids, names, tags }: Columns): WorkerRowResult[] => {
    const results: WorkerRowResult[] = []
    for (let i = 0; i < ids.length; i++) {
      try {
        results.push(insert.run(ids[i], names[i], tags[i]).changes === 1 ? 'created' : outcomeOver(find(ids[i]), plantFromRow({ id: ids[i], name: names[i], tag: tags[i] })))
      } catch (err) {
        results.push({ error: describe(err) })
      }
    }
    return results
  })

  // Open once the migration above has written to the WAL, so the file exists. An fsync covers
  // the file, whichever descriptor it goes through.
  const wal = openSync(`${path}-wal`, 'r+')
  // Settles once every sync so far has; rejects for good after the first failure.
  let synced: Promise<void> = Promise.resolve()
  const commit = async (plants: Columns): Promise<WorkerRowResult[]> => {
    const results = write.immediate(plants)
    const sync = new Promise<void>((resolve, reject) => fdatasync(wal, (err) => err === null ? resolve() : reject(err)))
    synced = Promise.all([synced, sync]).then(() => {})
    await synced
    return results
  }

  return async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'commit': return await commit(request.plants)
      // A row is answered only once the WAL that holds it is synced, as its create was: a read
      // never shows what a power cut could take back (a batch written, its sync under way).
      case 'get': { const found = find(request.key); await synced; return found }
      // Answers once the syncs under way have: a disk stuck on one makes the store unready.
      case 'ping': ping.get(); await synced; return
      case 'close': await synced.catch(() => {}); closeSync(wal); db.close()
    }
  }
}

const port = parentPort!
let serve: (request: Request) => Promise<unknown>
try {
  serve = open(workerData.path)
  port.postMessage({ opened: true } satisfies Opened)
} catch (err) {
  port.postMessage({ opened: false, error: describe(err) } satisfies Opened)
  port.close()
}
// Each request runs as it arrives, in order (serve's synchronous part does the SQLite work);
// only its reply may wait, for a sync.
port.on('message', (request: Request) => {
  serve(request).then((value) => {
    port.postMessage({ id: request.id, ok: true, value } satisfies Reply)
    if (request.op === 'close') port.close() // nothing else to wait for: the worker ends
  }, (err: unknown) => {
    port.postMessage({ id: request.id, ok: false, error: describe(err) } satisfies Reply)
    if (request.op === 'commit' && (err as { syscall?: unknown }).syscall === 'fdatasync') process.exit(1)
  })
})
