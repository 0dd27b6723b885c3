import { enableCompileCache } from 'node:module'
import { join } from 'node:path'
import { keepTickShape } from './ops/tick-shape.ts'
import type { KeptToken } from './security/generated-token.ts'

// First of all, before the start-up's garbage collections (ops/tick-shape.ts).
keepTickShape()

// Node keeps the code it compiles (ours and the dependencies') in a cache keyed by each file's
// content and the Node version, so later starts skip most parsing. It lives in the OS's temp dir
// (or NODE_COMPILE_CACHE), where stale entries are never read and are cleaned with the rest.
// Only modules loaded after this call are cached, hence the dynamic imports.
enableCompileCache()
const [{ buildApp }, { loadConfig, loadConfigOrExit }, { DOCS_PREFIX }, { logDestination }, { keptToken }, { TokenSet }, { parseStoreUrl }] = await Promise.all([
  import('./app.ts'), import('./config.ts'), import('./openapi/document/docs.ts'), import('./ops/log-destination.ts'), import('./security/generated-token.ts'), import('./security/tokens.ts'), import('./store/url.ts')
])
// Time the process needs to exit after the flush of its traces is given up.
const EXIT_MARGIN_MS = 100

async function main (): Promise<void> {
  let config = loadConfigOrExit(process.env)

  // No tokens configured: the one kept beside the database. It is printed once, straight to
  // the terminal, never into the logs.
  const keptTokenFile = join(config.store.dataDir, 'api-token')
  let kept: KeptToken | undefined
  if (config.security.apiTokens.length === 0) {
    kept = keptToken(keptTokenFile)
    config = { ...config, security: { ...config.security, apiTokens: [kept.token] } }
  }

  // Traces start before the app, and the store's driver, load: OpenTelemetry instruments pg as it
  // loads. Off, no OpenTelemetry module is loaded at all.
  const tracing = config.ops.tracing === undefined
    ? undefined
    : await (await import('./ops/tracing.ts')).startTracing(config.ops.tracing, { postgres: parseStoreUrl(config.store.databaseUrl).kind === 'postgres' })
  const tokens = new TokenSet(config.security.apiTokens)
  const logs = logDestination()
  // 'exit' comes with every process.exit below, and with a natural end; its handlers run synchronously.
  process.on('exit', logs.flushSync)
  // API_TOKENS_FILE is followed as it changes, and read as at start: a file that no longer passes
  // the config's checks is refused, and the tokens in force stay.
  const file = process.env.API_TOKENS_FILE
  const tokensFile = file === undefined ? undefined : { path: file, read: () => loadConfig(process.env).security.apiTokens }
  const app = await buildApp(config, { tokens, tracing, logStream: logs, tokensFile })
  // Logged, flushed (the exit flushes the log), and the end: the state after one is unknown.
  process.on('uncaughtException', (err) => {
    app.log.fatal({ err }, 'uncaught exception, exiting')
    process.exit(1)
  })
  const address = await app.listen({ port: config.http.port, host: config.http.host })
  const tokenLine = kept === undefined
    ? ''
    : `No API_TOKENS set; accepting the ${kept.created ? 'new' : 'reused'} token kept in ${keptTokenFile}:\n  ${kept.token}\n`
  const metricsLine = app.metricsUrl === undefined ? '' : `Metrics: ${app.metricsUrl}\n`
  process.stdout.write(`\n${app.documentTitle} is listening on ${address}\n${tokenLine}API docs: ${address}${DOCS_PREFIX}\n${metricsLine}\n`)

  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) {
      app.log.warn({ signal }, 'second signal, exiting now')
      process.exit(1)
    }
    closing = true
    app.log.info({ signal }, 'closing: draining in-flight requests')
    const deadline = Date.now() + config.http.shutdownTimeout
    setTimeout(() => {
      app.log.error('drain deadline passed, exiting')
      process.exit(1)
    }, config.http.shutdownTimeout).unref()
    // Stops accepting, waits for in-flight requests, then closes the store (onClose); then the
    // spans still queued are flushed, for what is left of the bound: a collector that hangs loses
    // them, and never holds the exit.
    app.close().then(async () => {
      if (tracing !== undefined && !await tracing.shutdown(Math.max(deadline - Date.now() - EXIT_MARGIN_MS, 0))) {
        app.log.warn('the trace collector did not take the last spans in time; exiting without them')
      }
      process.exit(0)
    }, (err) => {
      app.log.error({ err }, 'error while closing')
      process.exit(1)
    })
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)

  // SIGHUP re-reads API_TOKENS_FILE at once, changed or not.
  process.on('SIGHUP', () => {
    if (app.reloadTokens === undefined) app.log.warn('SIGHUP: no API_TOKENS_FILE to re-read; tokens unchanged')
    else app.reloadTokens('SIGHUP')
  })
}

// A service that cannot start (database unreachable, a document the router refuses) says why
// in one line and exits 1.
await main().catch((err: Error) => {
  process.stderr.write(`Plant Store cannot start: ${err.message}\n`)
  process.exit(1)
})
