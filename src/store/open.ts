import { resolve } from 'node:path'
import type { StoreObserver } from './group-commit.js'
import type { PlantStore } from './store.js'

export interface StoreOptions {
  pgPoolSize: number
  onIdleError?: (err: Error) => void
  /** Told of every commit and answered create (the metrics). */
  observer?: StoreObserver
}

/** Opens the store DATABASE_URL names, running its migrations, and loading only that store's driver. */
export async function openStore (databaseUrl: string, { pgPoolSize, onIdleError, observer }: StoreOptions): Promise<PlantStore> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { openSqliteStore } = await import('./sqlite.js')
    return openSqliteStore(resolve(databaseUrl.slice('sqlite:'.length)), { observer })
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { openPostgresStore } = await import('./postgres.js')
    return await openPostgresStore(databaseUrl, { poolSize: pgPoolSize, onIdleError, observer })
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`)
}
