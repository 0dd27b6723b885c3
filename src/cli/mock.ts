// npm run mock -- <document>: a mock of any OpenAPI 3.0 or 3.1 document, on HOST and PORT, from
// the engine the service runs on: the same routes, parameter and body parsing, validation and
// security (credentials checked for presence and form only), each operation answered from the
// document (openapi/mock/mock.ts). What it cannot serve is named once at start and left out; a document
// it cannot read at all stops it, in one line. The image runs it as its `mock` role.
import { enableCompileCache } from 'node:module'
import { resolve } from 'node:path'

// As server.ts: later starts skip most compiling; only modules loaded after this call are cached.
enableCompileCache()
const [{ loadConfigOrExit }, { loadDocument }, { basePaths }, { buildMock, RESET_PATH }, { logDestination }] = await Promise.all([
  import('../config.ts'), import('../openapi/document/document.ts'), import('../openapi/document/base-paths.ts'), import('./mock-app.ts'), import('../ops/log-destination.ts')
])

async function main (): Promise<void> {
  const args = process.argv.slice(2)
  const stateless = args.includes('--stateless')
  const [path, ...extra] = args.filter((arg) => arg !== '--stateless')
  if (path === undefined || extra.length > 0) {
    process.stderr.write('Usage: npm run mock -- <document> [--stateless] (an OpenAPI 3.0 or 3.1 document, YAML or JSON)\n')
    process.exit(2)
  }
  const config = loadConfigOrExit(process.env)
  const logs = logDestination()
  process.on('exit', logs.flushSync)
  // npm runs its scripts at the project's root; the path is the user's, from where they ran it.
  const loaded = await loadDocument(resolve(process.env.INIT_CWD ?? process.cwd(), path))
  const { app, document, refused, checkExamples, remembered } = await buildMock(config, loaded, path, logs, { stateless })
  const address = await app.listen({ port: config.http.port, host: config.http.host })
  const leftOut = refused.length === 0 ? '' : `${refused.length} operation(s) left out, named in the log\n`
  const memory = stateless ? 'Stateless: every request answered from the document alone\n' : `Remembers what clients write (reset: POST ${address}${RESET_PATH}):\n${remembered.map((line) => `  ${line}\n`).join('') || '  nothing: no resource inferred\n'}`
  // As a client made from the document sends them: under its servers' base paths too.
  const bases = basePaths(document).map((base) => `Its paths also under ${address}${base}\n`).join('')
  process.stdout.write(`\nMock of ${path} listening on ${address}\n${bases}${leftOut}${memory}API docs: ${address}/docs\n\n`)
  const shutdown = (): void => { app.close().then(() => process.exit(0), () => process.exit(1)) }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  // Meanwhile requests are answered: an example is checked when first served, if this has not reached it yet.
  const { examples, invalid } = await checkExamples()
  app.log.info({ examples, invalid }, `examples checked against their schemas: ${invalid} of ${examples} contradict theirs and are not served`)
}

// A document it cannot read says why in one line (file and JSON pointer), with no stack trace.
await main().catch((err: Error) => {
  process.stderr.write(`The mock cannot start: ${err.message}\n`)
  process.exit(1)
})
