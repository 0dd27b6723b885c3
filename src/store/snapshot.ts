import { existsSync } from 'node:fs'
import Database from 'better-sqlite3'
import type pg from 'pg'
import { createPool, MIGRATIONS as POSTGRES_MIGRATIONS } from './postgres.ts'
import { MIGRATIONS as SQLITE_MIGRATIONS, schemaVersion } from './sqlite-schema.ts'
import { checkSchemaVersion, plantFromRow, type PlantRow, type StoredPlant } from './store.ts'
import type { StoreUrl } from './url.ts'

// A point-in-time, read-only view of a store, for copying it while a service writes: every plant
// acknowledged before the view was opened, and nothing acknowledged after. On SQLite one read
// transaction (WAL keeps what it saw, and writers carry on), on PostgreSQL one REPEATABLE READ
// READ ONLY transaction; neither blocks a writer. The file of a SQLite store is opened read-only.

export interface Snapshot {
  /** How many plants the view holds. */
  readonly count: number
  /** The view's plants in id order, at most `size` at a time. */
  pages: (size: number) => AsyncGenerator<StoredPlant[]>
  /** The view's ids in order, at most `size` at a time. */
  ids: (size: number) => AsyncGenerator<bigint[]>
  /**
   * The plants with these ids, in no order: the view's, or with `readers` above 1, those stored
   * when it is asked (a stored plant never changes), read on that many connections at once.
   */
  find: (ids: bigint[]) => Promise<StoredPlant[]>
  close: () => Promise<void>
}

/** Opens a view of the store; throws, saying why, when there is no Plant Store there to read. */
export async function openSnapshot (store: StoreUrl, { readers = 1 }: { readers?: number } = {}): Promise<Snapshot> {
  return store.kind === 'sqlite' ? sqliteSnapshot(store.path) : await postgresSnapshot(store.url, readers)
}

/** The schema version a store is at, read without writing anything: 0 where there is no store yet. */
export async function storeVersion (store: StoreUrl): Promise<{ version: number, known: number }> {
  if (store.kind === 'sqlite') {
    if (!existsSync(store.path)) return { version: 0, known: SQLITE_MIGRATIONS.length }
    const db = new Database(store.path, { readonly: true, fileMustExist: true })
    try {
      return { version: schemaVersion(db), known: SQLITE_MIGRATIONS.length }
    } finally {
      db.close()
    }
  }
  const pool = createPool(store.url, { poolSize: 1 })
  try {
    return { version: await postgresVersion(pool), known: POSTGRES_MIGRATIONS.length }
  } finally {
    await pool.end()
  }
}

function sqliteSnapshot (path: string): Snapshot {
  if (!existsSync(path)) throw new Error(`${path} does not exist`)
  const db = new Database(path, { readonly: true, fileMustExist: true })
  let count: number
  try {
    checkReadable(schemaVersion(db), SQLITE_MIGRATIONS.length)
    db.defaultSafeIntegers(true)
    db.exec('BEGIN')
    // The transaction's first read fixes the view.
    count = Number(db.prepare('SELECT count(*) FROM plants').pluck().get())
  } catch (err) {
    db.close()
    throw err
  }
  // SQLite's JSON reads integers as 64-bit ones, so ids of any size pass exactly.
  const withIds = db.prepare<[string], PlantRow>('SELECT id, name, tag FROM plants WHERE id IN (SELECT value FROM json_each(?))')
  return {
    count,
    ...inIdOrder(async function * <Row extends { id: bigint }>(columns: string, size: number) {
      const first = db.prepare<[number], Row>(`SELECT ${columns} FROM plants ORDER BY id LIMIT ?`)
      const after = db.prepare<[bigint, number], Row>(`SELECT ${columns} FROM plants WHERE id > ? ORDER BY id LIMIT ?`)
      for (let rows = first.all(size); rows.length > 0; rows = after.all(rows.at(-1)!.id, size)) yield rows
    }),
    find: async (ids) => withIds.all(`[${ids.join(',')}]`).map(plantFromRow),
    async close () {
      db.close()
    }
  }
}

async function postgresSnapshot (url: string, readers: number): Promise<Snapshot> {
  // The view's own connection, and the readers' beside it.
  const pool = createPool(url, { poolSize: readers > 1 ? 1 + readers : 1 })
  let client: pg.PoolClient | undefined
  let count: number
  try {
    client = await pool.connect()
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    // The transaction's first statement fixes the view.
    checkReadable(await postgresVersion(client), POSTGRES_MIGRATIONS.length)
    count = Number((await client.query<{ count: bigint }>('SELECT count(*) FROM plants')).rows[0].count)
  } catch (err) {
    client?.release()
    await pool.end()
    throw err
  }
  const view = client
  return {
    count,
    ...inIdOrder(async function * <Row extends { id: bigint }>(columns: string, size: number) {
      const read = async (after?: bigint): Promise<Row[]> => (after === undefined
        ? await view.query<Row>(`SELECT ${columns} FROM plants ORDER BY id LIMIT $1`, [size])
        : await view.query<Row>(`SELECT ${columns} FROM plants WHERE id > $2 ORDER BY id LIMIT $1`, [size, after])).rows
      for (let rows = await read(); rows.length > 0; rows = await read(rows.at(-1)!.id)) yield rows
    }),
    find: async (ids) => (await (readers > 1 ? pool : view).query<PlantRow>('SELECT id, name, tag FROM plants WHERE id = ANY($1::int8[])', [ids])).rows.map(plantFromRow),
    async close () {
      await view.query('ROLLBACK').catch(() => {})
      view.release()
      await pool.end()
    }
  }
}

/** Reads a view's rows of some columns in id order, `size` at a time (keyset paging: after the last id seen). */
type RowsInIdOrder = <Row extends { id: bigint }>(columns: string, size: number) => AsyncGenerator<Row[]>

/** A view's plants and its ids, page by page, as its store reads rows in id order. */
function inIdOrder (rows: RowsInIdOrder): Pick<Snapshot, 'pages' | 'ids'> {
  return {
    async * pages (size) {
      for await (const page of rows<PlantRow>('id, name, tag', size)) yield page.map(plantFromRow)
    },
    async * ids (size) {
      for await (const page of rows<{ id: bigint }>('id', size)) yield page.map((row) => row.id)
    }
  }
}

/** The version schema_migrations records; 0 where the table is not there. */
async function postgresVersion (db: pg.Pool | pg.PoolClient): Promise<number> {
  const { rows } = await db.query<{ table: string | null }>("SELECT to_regclass('schema_migrations') AS table")
  if (rows[0].table === null) return 0
  return (await db.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM schema_migrations')).rows[0].version
}

function checkReadable (version: number, known: number): void {
  if (version === 0) throw new Error('it holds no Plant Store (its schema was never migrated)')
  checkSchemaVersion(version, known)
}
