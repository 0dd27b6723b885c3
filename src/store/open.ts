import type { CommitTracer, GroupCommitOptions } from './group-commit.ts'
import type { PlantStore } from './store.ts'
import { parseStoreUrl } from './url.ts'

export type StoreOptions = Pick<GroupCommitOptions, 'observer' | 'timeoutMs' | 'maxPending'> & {
  /** Traces each commit, given the store's kind (the db.system.name of its spans). */
  tracer?: (store: 'sqlite' | 'postgresql') => CommitTracer
  pgPoolSize: number
  /**
   * Told of a failure no request is waiting on: an idle PostgreSQL connection's error, or the
   * SQLite worker's death. The store recovers by itself either way.
   */
  onConnectionError?: (err: Error) => void
}

/** Opens the store a URL names (as DATABASE_URL does), running its migrations, and loading only that store's driver. */
export async function openStore (databaseUrl: string, { pgPoolSize, onConnectionError, tracer, ...bounds }: StoreOptions): Promise<PlantStore> {
  const store = parseStoreUrl(databaseUrl)
  if (store.kind === 'sqlite') {
    const { openSqliteStore } = await import('./sqlite.ts')
    return await openSqliteStore(store.path, { onWorkerExit: onConnectionError, tracer: tracer?.('sqlite'), ...bounds })
  }
  const { openPostgresStore } = await import('./postgres.ts')
  return await openPostgresStore(store.url, { poolSize: pgPoolSize, onIdleError: onConnectionError, tracer: tracer?.('postgresql'), ...bounds })
}
