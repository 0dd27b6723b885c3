import { resolve } from 'node:path'
import type { GroupCommitOptions } from './group-commit.js'
import type { PlantStore } from './store.js'

export type StoreOptions = Pick<GroupCommitOptions, 'observer' | 'timeoutMs' | 'maxPending'> & {
  pgPoolSize: number
  /**
   * Told of a failure no request is waiting on: an idle PostgreSQL connection's error, or the
   * SQLite worker's death. The store recovers by itself either way.
   */
  onConnectionError?: (err: Error) => void
}

/** Opens the store DATABASE_URL names, running its migrations, and loading only that store's driver. */
export async function openStore (databaseUrl: string, { pgPoolSize, onConnectionError, ...bounds }: StoreOptions): Promise<PlantStore> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { openSqliteStore } = await import('./sqlite.js')
    return await openSqliteStore(resolve(databaseUrl.slice('sqlite:'.length)), { onWorkerExit: onConnectionError, ...bounds })
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { openPostgresStore } = await import('./postgres.js')
    return await openPostgresStore(databaseUrl, { poolSize: pgPoolSize, onIdleError: onConnectionError, ...bounds })
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`)
}
