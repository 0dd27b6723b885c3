// npm run migrate: brings the store's schema to this version without starting the server, for
// operators who migrate before a rollout, as a role that may change the schema: MIGRATE_DATABASE_URL
// when set (the instances then serve as a role with only SELECT and INSERT), else DATABASE_URL.
// Safe to run while instances are starting.
import { ConfigError, loadConfig } from '../config.ts'
import { openStore } from '../store/open.ts'
import { redactUrl } from '../config/redact.ts'

try {
  const { migrateDatabaseUrl } = loadConfig(process.env).store
  const store = await openStore(migrateDatabaseUrl, { pgPoolSize: 1 })
  await store.close()
  console.log(`${redactUrl(migrateDatabaseUrl)} is migrated`)
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`)
  process.exitCode = 1
}
