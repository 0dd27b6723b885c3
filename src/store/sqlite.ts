import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { StoreUnavailableError } from '../errors.js'
import type { CreateOutcome, PlantStore, StoredPlant } from './store.js'

// Versioned in code: MIGRATIONS[n] takes the schema from version n to n + 1,
// and PRAGMA user_version records how many have run.
export const MIGRATIONS: readonly string[] = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
]

// Faults of the file or its lock, not of our SQL: the store is unavailable for now.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|CANTOPEN|FULL|PROTOCOL)/

function guarded<A extends unknown[], R> (fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args)
    } catch (err) {
      throw UNAVAILABLE.test(String((err as { code?: unknown }).code)) ? new StoreUnavailableError({ cause: err }) : err
    }
  }
}

interface PlantRow { id: bigint, name: string, tag: string | null }

export function openSqliteStore (path: string): PlantStore {
  mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  // WAL with synchronous=FULL syncs every commit to disk: a 200 survives power loss.
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  // Read every INTEGER as bigint, so ids beyond 2^53 come back exact.
  db.defaultSafeIntegers(true)
  migrate(db)

  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const select = db.prepare<[bigint], PlantRow>('SELECT id, name, tag FROM plants WHERE id = ?')
  const ping = db.prepare('SELECT 1')

  const find = guarded((id: bigint): StoredPlant | undefined => {
    const row = select.get(id)
    if (row === undefined) return undefined
    return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag }
  })
  const write = guarded((plant: StoredPlant) => insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1)

  return {
    async create (plant): Promise<CreateOutcome> {
      if (write(plant)) return 'created'
      const existing = find(plant.id)
      return existing?.name === plant.name && existing.tag === plant.tag ? 'replayed' : 'conflict'
    },
    async get (id) {
      return find(id)
    },
    ping: async () => { guarded(() => ping.get())() },
    async close () {
      db.close()
    }
  }
}

function migrate (db: Database.Database): void {
  db.transaction(() => {
    const version = Number(db.pragma('user_version', { simple: true }))
    if (version > MIGRATIONS.length) {
      throw new Error(`the database is at schema version ${version}, newer than this service knows (${MIGRATIONS.length})`)
    }
    for (const sql of MIGRATIONS.slice(version)) db.exec(sql)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}
