import { resolve } from 'node:path'
import type { PlantStore } from './store.js'

/** Opens the store DATABASE_URL names, loading only that store's driver. */
export async function openStore (databaseUrl: string): Promise<PlantStore> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { openSqliteStore } = await import('./sqlite.js')
    return openSqliteStore(resolve(databaseUrl.slice('sqlite:'.length)))
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`)
}
