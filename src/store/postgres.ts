import pg from 'pg'
import { StoreUnavailableError } from '../errors.js'
import { checkSchemaVersion, outcomeOver, plantFromRow, type CreateOutcome, type PlantRow, type PlantStore, type StoredPlant } from './store.js'

// Versioned in code: MIGRATIONS[n] takes the schema from version n to n + 1; the table
// schema_migrations records which have run.
export const MIGRATIONS: readonly string[] = [
  'CREATE TABLE plants (id int8 PRIMARY KEY, name text NOT NULL, tag text)'
]

// Any fixed key will do, as long as only our migrations take it.
const MIGRATION_LOCK = 7_140_502_017
const INT8_OID = 20

// Errors that mean "the database cannot be reached or will not serve now", as opposed to a
// fault in our SQL: connection failures, class 08 (connection exception), 57P01-03 (shutdown,
// cannot connect now), 53300 (too many connections), and the pool's own connect timeout.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '53300'])
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/

export function isUnavailable (err: any): boolean {
  return NETWORK_CODES.has(err?.code) || String(err?.code).startsWith('08') || UNAVAILABLE_MESSAGE.test(String(err?.message))
}

export interface PostgresOptions {
  poolSize: number
  /** Told of errors on idle pooled connections, which no query is waiting to receive. */
  onIdleError?: (err: Error) => void
}

export function createPool (connectionString: string, { poolSize, onIdleError }: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    // A 200 means committed to disk, whatever the server's default.
    options: '-c synchronous_commit=on',
    // int8 comes back as bigint, never as a lossy number (pg's default is a string).
    types: { getTypeParser: ((oid: number, format?: any) => oid === INT8_OID ? BigInt : pg.types.getTypeParser(oid, format)) as any }
  })
  // Without a listener an idle connection's error (the server restarting) would crash the process.
  pool.on('error', (err) => onIdleError?.(err))
  return pool
}

export async function migrate (pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  try {
    // Several instances may start at once: one migrates, the others wait, then find nothing to do.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM schema_migrations')
    const version = rows[0].version
    checkSchemaVersion(version, MIGRATIONS.length)
    for (let next = version; next < MIGRATIONS.length; next++) {
      await client.query('BEGIN')
      try {
        await client.query(MIGRATIONS[next])
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [next + 1])
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK')
        throw err
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {})
    client.release()
  }
}

export async function openPostgresStore (connectionString: string, options: PostgresOptions): Promise<PlantStore> {
  const pool = createPool(connectionString, options)
  try {
    await migrate(pool)
  } catch (err) {
    await pool.end()
    throw err
  }

  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(text, values)
    } catch (err) {
      throw isUnavailable(err) ? new StoreUnavailableError({ cause: err }) : err
    }
  }
  const find = async (id: bigint): Promise<StoredPlant | undefined> => {
    const row = (await query<PlantRow>('SELECT id, name, tag FROM plants WHERE id = $1', [id])).rows[0]
    return row === undefined ? undefined : plantFromRow(row)
  }

  return {
    async create (plant): Promise<CreateOutcome> {
      // ON CONFLICT DO NOTHING waits for a concurrent insert of the same id to commit or roll
      // back, so the read below sees the winner. A failed plain INSERT would burn a transaction id.
      const inserted = await query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [plant.id, plant.name, plant.tag ?? null])
      if (inserted.rowCount === 1) return 'created'
      return outcomeOver(await find(plant.id), plant)
    },
    get: find,
    async ping () {
      await query('SELECT 1', [])
    },
    async close () {
      await pool.end()
    }
  }
}
