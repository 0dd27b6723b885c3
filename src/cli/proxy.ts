// npm run proxy -- <document> <upstream-url> [options]: listens on HOST and PORT, passes every
// request to the upstream and its answer back unchanged (openapi/proxy/proxy.ts), and judges each
// exchange by the document, on the engine the mock and the service run on and the verifier's
// checks of one exchange (openapi/proxy/judge.ts). Each violation is logged as it is found, with
// a curl command that sends the request again (no credential in it); on SIGINT or SIGTERM the
// proxy drains, prints a summary, writes the reports asked for, and exits 1 when it found a
// violation, 0 when it found none, 2 when it could not run. The image runs it as its `proxy` role.
import { writeFileSync } from 'node:fs'
import { PROXY_CHECKS } from '../openapi/verify/checks.ts'
import { checksOf, commandLine, fromUser, integer, isUsageError, UsageError } from './arguments.ts'

const USAGE = `Usage: npm run proxy -- <document> <upstream-url> [options]

Listens on HOST:PORT (127.0.0.1:3000 unless set), forwards every request to <upstream-url>
unchanged and its answer back unchanged, and judges both by the document (OpenAPI 3.0 or 3.1,
YAML or JSON). Each violation is logged at once, with a curl command (credentials as variables);
SIGINT or SIGTERM ends it with a summary, and exit code 1 if it found a violation.

Checks (all by default): ${PROXY_CHECKS.join(', ')}
  --checks a,b              only these
  --exclude-checks a,b      all but these
Bounds:
  --timeout SECONDS         for the upstream to begin an answer, else 504 (30)
  bodies past BODY_LIMIT_BYTES (1 MiB) pass on unjudged, with a note
Reports, written on exit:
  --report FILE.json        one entry per operation seen: requests, statuses, violations
  --junit FILE.xml          JUnit XML, for CI systems
`

async function main (): Promise<number> {
  const line = commandLine({ timeout: { type: 'string' } }, 'an upstream URL')
  if (line === undefined) {
    process.stdout.write(USAGE)
    return 0
  }
  const { values, document: path, url: upstream } = line
  const enabled = checksOf(PROXY_CHECKS, values.checks, values['exclude-checks'])
  const timeoutMs = integer(values.timeout, '--timeout', 30) * 1000

  const [{ ConfigError, loadConfig }, { loadDocument }, { modelOf }, { validatingProxy }, { basePaths }, { summaryOf }, { junitOf }, { logDestination }, { default: pino }] = await Promise.all([
    import('../config.ts'), import('../openapi/document/document.ts'), import('../openapi/document/upgrade.ts'), import('../openapi/proxy/validating-proxy.ts'), import('../openapi/document/base-paths.ts'),
    import('../openapi/verify/report.ts'), import('../openapi/verify/junit.ts'), import('../ops/log-destination.ts'), import('pino')
  ])
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    throw new UsageError(err.message)
  }
  const logs = logDestination()
  process.on('exit', logs.flushSync)
  const log = pino({ level: config.ops.logLevel }, logs)
  const document = await modelOf((await loadDocument(fromUser(path))).document, { inPlace: true })
  const { server, refused, report: reportOf } = await validatingProxy({
    http: config.http,
    document,
    file: path,
    upstream,
    enabled,
    timeoutMs,
    told: {
      violation: (operation, { check, status, detail }, curl) => log.warn({ check, operation, status, detail, curl }, `${check}: ${operation}: ${detail}`),
      failure: (operation, failure) => log.warn({ operation }, failure),
      unjudged: (request, problem) => log.error({ request, problem }, 'an exchange the proxy could not judge')
    }
  })
  for (const { problem } of refused) log.warn({ problem }, 'left out: the proxy cannot judge this operation')
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(config.http.port, config.http.host, resolve))
  const { port } = server.address() as { port: number }
  const listening = `http://${config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host}:${port}`
  const leftOut = refused.length === 0 ? '' : `${refused.length} operation(s) left out, named in the log\n`
  // An upstream given with the base path its clients send already would get it twice: said once, at start.
  const prefix = new URL(upstream).pathname.replace(/\/+$/, '')
  const twice = basePaths(document).includes(prefix) ? `Requests go to the upstream under its URL's path: a client's ${prefix}/… arrives there as ${prefix}${prefix}/…. If clients send the document's base path ${prefix}, give the upstream without it.\n` : ''
  process.stdout.write(`\nProxy for ${upstream}, judged by ${path}, listening on ${listening}\n${leftOut}${twice}\n`)

  // A signal drains what is in flight (bounded), then says what was found.
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, config.http.shutdownTimeout).unref())])
  server.closeAllConnections()
  const report = await reportOf(path)
  if (values.report !== undefined) writeFileSync(fromUser(values.report), `${JSON.stringify(report, null, 2)}\n`)
  if (values.junit !== undefined) writeFileSync(fromUser(values.junit), junitOf(report))
  logs.flushSync()
  process.stdout.write(`${summaryOf(report)}\n`)
  return report.operations.some((o) => o.violations.length > 0) ? 1 : 0
}

// A mistake in the command, or a document it cannot read, says why in one line, with no stack trace.
process.exitCode = await main().catch((err: Error) => {
  process.stderr.write(isUsageError(err) ? `${err.message}\n\n${USAGE}` : `npm run proxy cannot run: ${err.message}\n`)
  return 2
})
// Kept-alive connections to the upstream and timers end with the process.
process.exit()
