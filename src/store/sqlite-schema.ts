// The SQLite store's schema, versioned in code, for the worker that serves the store and for the
// tools that read or check a store file (copy-store).
import type { Database } from 'better-sqlite3'
import { checkSchemaVersion } from './store.ts'

// MIGRATIONS[n] takes the schema from version n to n + 1; PRAGMA user_version records how many have run.
export const MIGRATIONS: readonly string[] = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
]

/** The schema version a database file records: 0 for a file no migration has touched. */
export function schemaVersion (db: Database): number {
  return Number(db.pragma('user_version', { simple: true }))
}

/** Applies the migrations a database lacks, in one transaction; refuses a newer schema. */
export function migrate (db: Database): void {
  db.transaction(() => {
    const version = schemaVersion(db)
    checkSchemaVersion(version, MIGRATIONS.length)
    for (const sql of MIGRATIONS.slice(version)) db.exec(sql)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}
