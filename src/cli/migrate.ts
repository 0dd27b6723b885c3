// npm run migrate: applies the store's migrations for DATABASE_URL without starting the server,
// for operators who migrate before a rollout. Safe to run while instances are starting.
import { ConfigError, loadConfig } from '../config.js'
import { openStore } from '../store/open.js'
import { redactUrl } from '../store/url.js'

try {
  const config = loadConfig(process.env)
  const store = await openStore(config.databaseUrl, { pgPoolSize: 1 })
  await store.close()
  console.log(`${redactUrl(config.databaseUrl)} is migrated`)
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `migration failed: ${(err as Error).message}`)
  process.exitCode = 1
}
