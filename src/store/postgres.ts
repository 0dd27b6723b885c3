import pg from 'pg'
import { StoreUnavailableError } from '../errors.ts'
import { withDeadline } from './deadline.ts'
import { DEFAULT_BOUNDS, GroupCommit, type GroupCommitOptions } from './group-commit.ts'
import { checkSchemaVersion, outcomeOver, plantFromRow, type PlantRow, type PlantStore, type RowResult, type StoredPlant } from './store.ts'

// Versioned in code: MIGRATIONS[n] takes the schema from version n to n + 1; the table
// schema_migrations records which have run.
export const MIGRATIONS: readonly string[] = [
  'CREATE TABLE plants (id int8 PRIMARY KEY, name text NOT NULL, tag text)'
]

// Any fixed key will do, as long as only our migrations take it.
const MIGRATION_LOCK = 7_140_502_017
const INT8_OID = 20
const INSUFFICIENT_PRIVILEGE = '42501'

// Errors that mean "the database cannot be reached or will not serve now", as opposed to a
// fault in our SQL: connection failures, class 08 (connection exception), 57014 (our
// statement_timeout), 57P01-03 (shutdown, cannot connect now), 53300 (too many connections),
// and the pool's own timeouts, connecting and reading.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', '57014', '57P01', '57P02', '57P03', '53300'])
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/

export function isUnavailable (err: any): boolean {
  return NETWORK_CODES.has(err?.code) || String(err?.code).startsWith('08') || UNAVAILABLE_MESSAGE.test(String(err?.message))
}

export type PostgresOptions = Pick<GroupCommitOptions, 'observer' | 'timeoutMs' | 'maxPending' | 'tracer'> & {
  poolSize: number
  /** Told of errors on idle pooled connections, which no query is waiting to receive. */
  onIdleError?: (err: Error) => void
}

export function createPool (connectionString: string, { poolSize, onIdleError, timeoutMs = DEFAULT_BOUNDS.timeoutMs }: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    connectionTimeoutMillis: Math.min(5_000, timeoutMs),
    // A database that stops answering mid-statement (hung, failed over, partitioned without a
    // reset) fails the query here, and the pool drops that connection instead of reusing it.
    query_timeout: timeoutMs,
    // Idle connections to a vanished server are found by the kernel's keepalive probes.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // int8 comes back as bigint, never as a lossy number (pg's default is a string).
    types: { getTypeParser: ((oid: number, format?: any) => oid === INT8_OID ? BigInt : pg.types.getTypeParser(oid, format)) as any }
  })
  // Without a listener an idle connection's error (the server restarting) would crash the process.
  pool.on('error', (err) => onIdleError?.(err))
  // Nor may a connection's error between the pool and its user: a backend that finishes its start
  // and at once reports its postmaster's death (57P01) sends both in one packet, and pg emits the
  // error after the pool has taken its listener off the connection and before the caller of
  // connect() can put one on. So every connection keeps a listener of its own; the error it hears
  // fails the connection's next statement ("not queryable"), which answers 503 and drops it.
  pool.on('connect', (client) => { client.on('error', () => {}) })
  return pool
}

/** The schema version the database is at, read with no DDL and no lock: 0 when never migrated. */
export async function schemaVersion (pool: pg.Pool): Promise<number> {
  const { rows: [{ present }] } = await pool.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
  if (!present) return 0
  const { rows: [{ version }] } = await pool.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM schema_migrations')
  return version
}

/**
 * Brings the schema to this service's version, in one transaction. Several instances (or `npm run
 * migrate`) may start at once: the first takes a transaction-scoped advisory lock, and the others
 * wait for its commit, then find nothing to do. A transaction's lock holds through a transaction
 * pooler (PgBouncer), where a session's would be taken on one server connection and released on
 * another.
 */
export async function migrate (pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM schema_migrations')
    const version = rows[0].version
    checkSchemaVersion(version, MIGRATIONS.length)
    for (let next = version; next < MIGRATIONS.length; next++) {
      await client.query(MIGRATIONS[next])
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [next + 1])
    }
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.release()
  }
}

/**
 * At start: serves a database at this service's schema version as it is, so its role needs only
 * SELECT and INSERT on the tables. A database behind it is migrated when the role may change the
 * schema (a fresh database it owns), and otherwise stops the start with the command that migrates.
 */
async function ensureSchema (pool: pg.Pool): Promise<void> {
  const version = await schemaVersion(pool)
  checkSchemaVersion(version, MIGRATIONS.length)
  if (version === MIGRATIONS.length) return
  try {
    await migrate(pool)
  } catch (err) {
    if ((err as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw err
    throw new Error(`the database is at schema version ${version}, behind this service's ${MIGRATIONS.length}, and this role may not migrate it (${(err as Error).message}): run \`npm run migrate\` as a role that may, with MIGRATE_DATABASE_URL`)
  }
}

// Most creates one statement inserts. Batches stay far below it under any load seen here; it
// bounds the size of one statement's arrays.
const MAX_BATCH = 1000

export async function openPostgresStore (connectionString: string, options: PostgresOptions): Promise<PlantStore> {
  const { timeoutMs = DEFAULT_BOUNDS.timeoutMs } = options
  const pool = createPool(connectionString, options)
  try {
    await ensureSchema(pool)
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
  // What a commit needs is set in its own transaction, never on the session, so that it holds
  // through a transaction pooler (PgBouncer), which hands each transaction any server connection
  // and refuses startup options: a 200 means flushed to disk whatever the server's default says,
  // and a statement slower than our bound is cancelled by the server itself, so it holds no locks
  // after we gave up on it. One round trip opens the transaction with both.
  const begin = `BEGIN; SET LOCAL synchronous_commit = on; SET LOCAL statement_timeout = ${timeoutMs}`
  /** Runs one statement in a transaction of its own, with the settings above, and commits it. */
  const commitStatement = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> => {
    let client: pg.PoolClient | undefined
    let broken: Error | undefined
    // The server may drop the connection between two of our statements: that fails the next one,
    // and must not reach the process as an unhandled 'error' event.
    const onError = (err: Error): void => { broken = err }
    try {
      client = await pool.connect()
      client.on('error', onError)
      await client.query(begin)
      const result = await client.query<R>(text, values)
      await client.query('COMMIT')
      return result
    } catch (err) {
      if (isUnavailable(err)) {
        broken = err as Error // the connection is not reused
        throw new StoreUnavailableError({ cause: err })
      }
      await client?.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      client?.off('error', onError)
      client?.release(broken)
    }
  }
  const findMany = async (ids: bigint[]): Promise<Map<bigint, StoredPlant>> => {
    const { rows } = await query<PlantRow>('SELECT id, name, tag FROM plants WHERE id = ANY($1::int8[])', [ids])
    return new Map(rows.map((row) => [row.id, plantFromRow(row)]))
  }

  /**
   * One batch, one statement, one transaction: every id's first plant is inserted unless its id
   * is taken, and one read fetches the plants already stored under the ids that were not. Each
   * plant is then a create, a replay or a conflict against its id's winner, as one at a time
   * would have been. ON CONFLICT DO NOTHING waits for a concurrent insert of the same id (another
   * batch, another instance) to commit or roll back, so the read sees the winner. Rows go in id
   * order, so concurrent batches take their row locks in one order and cannot deadlock.
   */
  const commitBatch = async (plants: StoredPlant[]): Promise<RowResult[]> => {
    // Each id's first plant, by its position in the batch.
    const firsts = new Map<bigint, number>()
    plants.forEach((plant, i) => { if (!firsts.has(plant.id)) firsts.set(plant.id, i) })
    const rows = [...firsts.values()].map((i) => plants[i]).sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    let inserted: Set<bigint>
    try {
      const result = await commitStatement<{ id: bigint }>(
        'INSERT INTO plants (id, name, tag) SELECT * FROM unnest($1::int8[], $2::text[], $3::text[]) ON CONFLICT (id) DO NOTHING RETURNING id',
        [rows.map((p) => p.id), rows.map((p) => p.name), rows.map((p) => p.tag ?? null)]
      )
      inserted = new Set(result.rows.map((row) => row.id))
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err // the whole batch: nothing was written
      if (plants.length === 1) return [{ error: err }]
      // A row the database refused failed the statement, and so the batch: retry the plants
      // one at a time, in arrival order, so that only the bad one fails.
      const results: RowResult[] = []
      for (const plant of plants) results.push((await commitBatch([plant]))[0])
      return results
    }
    const taken = rows.filter((p) => !inserted.has(p.id)).map((p) => p.id)
    const stored = taken.length === 0 ? new Map<bigint, StoredPlant>() : await findMany(taken)
    return plants.map((plant, i) => {
      if (!inserted.has(plant.id)) return outcomeOver(stored.get(plant.id), plant)
      const first = firsts.get(plant.id)!
      return first === i ? 'created' : outcomeOver(plants[first], plant)
    })
  }
  // Commits run side by side on the pool's connections; each waits for its own WAL flush.
  const group = new GroupCommit(commitBatch, { maxBatch: MAX_BATCH, maxInFlight: options.poolSize, observer: options.observer, tracer: options.tracer, timeoutMs, maxPending: options.maxPending })

  return {
    create: (plant) => group.create(plant),
    createMany: commitBatch,
    // Durable as read: every row is committed with synchronous_commit = on (commitStatement),
    // under which PostgreSQL shows a commit to other sessions only after its WAL is flushed.
    get: async (id) => (await withDeadline(findMany([id]), timeoutMs)).get(id),
    async ping () {
      await query('SELECT 1', [])
    },
    async close () {
      await group.drain()
      await pool.end()
    }
  }
}
