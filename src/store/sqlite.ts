import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { StoreUnavailableError } from '../errors.js'
import { GroupCommit, type RowResult, type StoreObserver } from './group-commit.js'
import { checkSchemaVersion, outcomeOver, plantFromRow, type CreateOutcome, type PlantRow, type PlantStore, type StoredPlant } from './store.js'

// Versioned in code: MIGRATIONS[n] takes the schema from version n to n + 1,
// and PRAGMA user_version records how many have run.
export const MIGRATIONS: readonly string[] = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
]

const BUSY_TIMEOUT_MS = 250

// Most creates one transaction commits; a larger queue is committed in several.
const MAX_BATCH = 256

// Faults of the file or its lock, not of our SQL: the store is unavailable for now.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|CANTOPEN|FULL|PROTOCOL)/

function classify (err: unknown): unknown {
  return UNAVAILABLE.test(String((err as { code?: unknown }).code)) ? new StoreUnavailableError({ cause: err }) : err
}

export interface SqliteOptions {
  observer?: StoreObserver
}

export function openSqliteStore (path: string, { observer }: SqliteOptions = {}): PlantStore {
  mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // WAL with synchronous=FULL syncs every commit to disk: a 200 survives power loss.
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  // Waiting for another process's lock blocks our event loop (the driver is synchronous):
  // wait briefly, then answer 503 and let the client retry, rather than stall every request.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // Read every INTEGER as bigint, so ids beyond 2^53 come back exact.
  db.defaultSafeIntegers(true)
  migrate(db)

  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const select = db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?')
  const ping = db.prepare('SELECT 1')

  const find = (id: bigint): StoredPlant | undefined => {
    const row = select.get(id)
    return row === undefined ? undefined : plantFromRow(row)
  }
  const reading = <T>(read: () => T): T => {
    try {
      return read()
    } catch (err) {
      throw classify(err)
    }
  }
  const createOne = (plant: StoredPlant): CreateOutcome =>
    insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1 ? 'created' : outcomeOver(find(plant.id), plant)

  // One transaction per batch, its rows inserted in arrival order, so the first of two
  // different plants for one id wins. A row that fails fails alone (SQLite undoes just that
  // statement); a failed commit fails the whole batch.
  const transaction = db.transaction((plants: StoredPlant[]): RowResult[] => plants.map((plant) => {
    try {
      return createOne(plant)
    } catch (err) {
      return { error: classify(err) }
    }
  }))
  const group = new GroupCommit((plants) => reading(() => transaction.immediate(plants)), { maxBatch: MAX_BATCH, maxInFlight: 1, observer })

  return {
    create: (plant) => group.create(plant),
    get: async (id) => reading(() => find(id)),
    ping: async () => { reading(() => ping.get()) },
    async close () {
      await group.drain()
      db.close()
    }
  }
}

function migrate (db: Database.Database): void {
  db.transaction(() => {
    const version = Number(db.pragma('user_version', { simple: true }))
    checkSchemaVersion(version, MIGRATIONS.length)
    for (const sql of MIGRATIONS.slice(version)) db.exec(sql)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}
