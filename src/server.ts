import { randomBytes } from 'node:crypto'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'
import { DOCS_PREFIX } from './docs.js'

// How long in-flight requests may take to drain after SIGTERM/SIGINT before we give up.
const DRAIN_DEADLINE_MS = 10_000

async function main (): Promise<void> {
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }

  // No tokens configured: make one, so `npm start` works out of the box. It is printed once,
  // straight to the terminal, never into the logs.
  const generated = config.apiTokens.length === 0 ? randomBytes(32).toString('base64url') : undefined
  if (generated !== undefined) config = { ...config, apiTokens: [generated] }

  const app = await buildApp(config)
  const address = await app.listen({ port: config.port, host: config.host })
  const tokenLine = generated === undefined ? '' : `No API_TOKENS set; this run accepts the generated token:\n  ${generated}\n`
  process.stdout.write(`\nPlant Store is listening on ${address}\n${tokenLine}API docs: ${address}${DOCS_PREFIX}\n\n`)

  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) {
      app.log.warn({ signal }, 'second signal, exiting now')
      process.exit(1)
    }
    closing = true
    app.log.info({ signal }, 'closing: draining in-flight requests')
    setTimeout(() => {
      app.log.error('drain deadline passed, exiting')
      process.exit(1)
    }, DRAIN_DEADLINE_MS).unref()
    // Stops accepting, waits for in-flight requests, then closes the store (onClose).
    app.close().then(() => process.exit(0), (err) => {
      app.log.error({ err }, 'error while closing')
      process.exit(1)
    })
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}

await main()
