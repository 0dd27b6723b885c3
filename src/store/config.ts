import { dirname } from 'node:path'
import { integer, optional, section, string } from '../config/section.ts'
import { DEFAULT_BOUNDS } from './group-commit.ts'
import { redactUrl } from '../config/redact.ts'
import { parseStoreUrl, STORE_URL_FORMS } from './url.ts'

// The store's configuration: which store, and the bounds on every wait for it.

const DEFAULT_DATABASE_URL = 'sqlite:./data/plants.db'

export const storeConfig = section({
  title: 'Store',
  variables: {
    DATABASE_URL: string({ default: DEFAULT_DATABASE_URL, description: '`sqlite:<path>` (the directory is created if missing), or `postgres://user:password@host:port/database` (also `postgresql://`).' }),
    PG_POOL_SIZE: integer(1, 1000, { default: 10, description: 'With PostgreSQL: the most connections one instance opens.' }),
    STORE_TIMEOUT_MS: integer(100, 600_000, { default: DEFAULT_BOUNDS.timeoutMs, description: 'Longest a create waits for the store, whatever it does (a disk stuck in `fsync`, a PostgreSQL silent mid-statement or mid-connect); past it, 503 with `Retry-After`. With PostgreSQL it is also each commit\'s server-side `statement_timeout` and the pool\'s query timeout, so a connection that stops answering is dropped, not reused.' }),
    MAX_PENDING_CREATES: integer(1, 1_000_000, { default: DEFAULT_BOUNDS.maxPending, description: 'Most creates waiting for a commit on one instance; past it, a create answers 503 at once. As many as `MAX_CONNECTIONS`, so a healthy instance never reaches it, while clients retrying against a stuck store cannot pile up memory.' }),
    MIGRATE_DATABASE_URL: optional(string({ description: 'Unset: `DATABASE_URL`. Read by `npm run migrate` only: the database to migrate, as a role that may change its schema, so that the instances can serve as one that only reads and inserts ([roles](operating.md#postgresql)).' }))
  },
  secrets: ['DATABASE_URL', 'MIGRATE_DATABASE_URL'],
  read: ({ values, problem }) => {
    const storeUrl = (name: string, url: string): string => {
      try {
        parseStoreUrl(url)
      } catch {
        problem(`${name} must look like ${STORE_URL_FORMS}, got "${redactUrl(url)}"`)
      }
      return url
    }
    const databaseUrl = storeUrl('DATABASE_URL', values.DATABASE_URL)
    return {
      databaseUrl,
      migrateDatabaseUrl: values.MIGRATE_DATABASE_URL === undefined ? databaseUrl : storeUrl('MIGRATE_DATABASE_URL', values.MIGRATE_DATABASE_URL),
      pgPoolSize: values.PG_POOL_SIZE,
      timeoutMs: values.STORE_TIMEOUT_MS,
      maxPending: values.MAX_PENDING_CREATES,
      // Where the service keeps what is its own beside the store (the kept token): beside the
      // SQLite file, or ./data with PostgreSQL.
      dataDir: dirname(databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : DEFAULT_DATABASE_URL.slice('sqlite:'.length))
    }
  }
})

export type StoreConfig = ReturnType<typeof storeConfig.read>
