import Database from 'better-sqlite3'
import { migrate } from '../../src/store/sqlite-schema.ts'
import type { StoredPlant } from '../../src/store/store.ts'

/**
 * A SQLite store of `count` plants, `plant(i)` for i from 0, made with the store's own migrations
 * and written directly in one transaction: a big store in seconds, for the copy's tests and bench.
 */
export function bulkSqliteStore (path: string, count: number, plant: (i: number) => StoredPlant): void {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  migrate(db)
  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)')
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const { id, name, tag } = plant(i)
      insert.run(id, name, tag ?? null)
    }
  })()
  db.close()
}
