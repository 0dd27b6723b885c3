// npm run migrate: brings the store's schema to this version without starting the server, for
// operators who migrate before a rollout, as a role that may change the schema: MIGRATE_DATABASE_URL
// when set (the instances then serve as a role with only SELECT and INSERT), else DATABASE_URL.
// Safe to run while instances are starting.
import { ConfigError, loadConfig } from '../config.js'
import { openStore } from '../store/open.js'
import { redactUrl } from '../config/redact.js'

try {
  const { migrateDatabaseUrl } = loadConfig(process.env).store
  const store = await openStore(migrateDatabaseUrl, { pgPoolSize: 1 })
  await store.close()
  console.log(`${redactUrl(migrateDatabaseUrl)} is migrated`)
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`)
  process.exitCode = 1
}
