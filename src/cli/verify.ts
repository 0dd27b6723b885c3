// npm run verify -- <document> <base-url> [options]: verifies a running HTTP service, written in
// anything, against an OpenAPI 3.0 or 3.1 document, on the engine the service and the mock run on
// (openapi/verify/). Prints a summary (and a progress line on long runs), writes the reports asked
// for, and exits 1 when it found a violation, 0 when it found none, 2 when it could not run or
// had nothing to send.
// The image runs it as its `verify` role.
import { writeFileSync } from 'node:fs'
import { CHECKS, VerifierLimit } from '../openapi/verify/checks.ts'
import { checksOf, commandLine, fromUser, integer, isUsageError, UsageError } from './arguments.ts'
import type { GivenCredentials } from '../openapi/verify/credentials.ts'
import { DEFAULTS } from '../openapi/verify/defaults.ts'
import type { Transport } from '../openapi/verify/verifier.ts'

const USAGE = `Usage: npm run verify -- <document> <base-url> [options]

Sends every operation of the document (OpenAPI 3.0 or 3.1, YAML or JSON) valid and invalid
requests, to <base-url> and nowhere else, and judges each answer by the document.

Credentials (each also from the environment variable in brackets, which keeps it out of the
process list; a curl command in the report names it so, never its value):
  --bearer TOKEN            for http bearer, OAuth 2.0 and OpenID Connect schemes [VERIFY_BEARER]
  --basic USER:PASSWORD     for http basic schemes [VERIFY_BASIC]
  --api-key KEY             for every apiKey scheme; SCHEME=KEY for one by name [VERIFY_API_KEY]
  --header 'Name: value'    sent with every request (repeatable)
Checks (all by default): ${CHECKS.join(', ')}
  --checks a,b              only these
  --exclude-checks a,b      all but these
Bounds:
  --generated N             valid requests drawn from the schemas per operation (${DEFAULTS.generated})
  --seed N                  the same seed, the same requests (a random one, printed, by default)
  --max-requests N          at most this many requests in all (${DEFAULTS.maxRequests})
  --time-limit SECONDS      stop sending after this long (${DEFAULTS.timeLimitMs / 1000})
  --concurrency N           operations verified at once (${DEFAULTS.concurrency})
  --request-timeout SECONDS for each answer (${DEFAULTS.requestTimeoutMs / 1000})
  --only-safe               only GET, HEAD and OPTIONS operations: a production smoke check
  --dry-run                 list what would be sent, as curl commands, and send nothing (a link's
                            request, made from an answer, is not among them)
Reports:
  --report FILE.json        one entry per operation: its requests and violations
  --junit FILE.xml          JUnit XML, for CI systems
`

function credentialsOf (values: Record<string, any>): GivenCredentials {
  const headers: Record<string, string> = {}
  for (const header of values.header ?? []) {
    const at = header.indexOf(':')
    if (at <= 0) throw new UsageError(`--header takes 'Name: value', not "${header}"`)
    headers[header.slice(0, at).trim()] = header.slice(at + 1).trim()
  }
  const keys: string[] = values['api-key'] ?? (process.env.VERIFY_API_KEY === undefined ? [] : [process.env.VERIFY_API_KEY])
  const byScheme = Object.fromEntries(keys.filter((key) => /^[^=]+=/.test(key)).map((key) => [key.slice(0, key.indexOf('=')), key.slice(key.indexOf('=') + 1)]))
  const all = keys.find((key) => !/^[^=]+=/.test(key))
  return {
    bearer: values.bearer ?? process.env.VERIFY_BEARER,
    basic: values.basic ?? process.env.VERIFY_BASIC,
    ...(keys.length > 0 && { apiKeys: { all, byScheme } }),
    headers
  }
}

/** A line that says how far the run is: rewritten in place on a terminal, every ten seconds elsewhere. */
function progressLine (): (done: number, of: number, requests: number, violations: number) => void {
  let last = 0
  return (done, of, requests, violations) => {
    const line = `${done}/${of} operations, ${requests} requests, ${violations} violations`
    if (process.stderr.isTTY) process.stderr.write(`\r${line}${done === of ? '\n' : ''}`)
    else if (Date.now() - last > 10_000 || done === of) {
      last = Date.now()
      process.stderr.write(`${line}\n`)
    }
  }
}

async function main (): Promise<number> {
  const line = commandLine({
    bearer: { type: 'string' },
    basic: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    header: { type: 'string', multiple: true },
    generated: { type: 'string' },
    seed: { type: 'string' },
    'max-requests': { type: 'string' },
    'time-limit': { type: 'string' },
    concurrency: { type: 'string' },
    'request-timeout': { type: 'string' },
    'only-safe': { type: 'boolean' },
    'dry-run': { type: 'boolean' }
  }, 'a base URL')
  if (line === undefined) {
    process.stdout.write(USAGE)
    return 0
  }
  const { values, document: path, url: baseUrl } = line
  const options = {
    credentials: credentialsOf(values),
    checks: checksOf(CHECKS, values.checks, values['exclude-checks']),
    seed: integer(values.seed, '--seed', Math.floor(Math.random() * 2 ** 31)),
    generated: integer(values.generated, '--generated', DEFAULTS.generated),
    maxRequests: integer(values['max-requests'], '--max-requests', DEFAULTS.maxRequests),
    timeLimitMs: integer(values['time-limit'], '--time-limit', DEFAULTS.timeLimitMs / 1000) * 1000,
    concurrency: Math.max(1, integer(values.concurrency, '--concurrency', DEFAULTS.concurrency)),
    onlySafe: values['only-safe'] === true,
    baseUrl,
    progress: progressLine()
  }
  const timeoutMs = integer(values['request-timeout'], '--request-timeout', DEFAULTS.requestTimeoutMs / 1000) * 1000
  // The engine is loaded once the command is known to be right: a mistake in it is said at once.
  const [{ loadDocument }, { modelOf }, { verify }, { httpTransport }, { reportOf, summaryOf }, { junitOf }, { curlOf }] = await Promise.all([
    import('../openapi/document/document.ts'), import('../openapi/document/upgrade.ts'), import('../openapi/verify/verifier.ts'), import('../openapi/verify/http.ts'),
    import('../openapi/verify/report.ts'), import('../openapi/verify/junit.ts'), import('../openapi/verify/curl.ts')
  ])
  const document = await modelOf((await loadDocument(fromUser(path))).document, { inPlace: true })

  if (values['dry-run'] === true) {
    const listed: string[] = []
    // Not sent by the verifier's own choice: not the service failing, so nothing fails, and no value is shrunk.
    const send: Transport = async (request) => { throw new VerifierLimit(`dry run: ${request.method} ${request.path} not sent`) }
    const verification = await verify(document, send, { ...options, progress: undefined })
    for (const operation of verification.operations) {
      listed.push(`${operation.method} ${operation.path} (${operation.operationId})`)
      for (const sent of operation.sent) listed.push(`  ${sent.kind}, ${sent.fault ?? sent.source}${sent.breaks === undefined ? '' : ` (${sent.breaks})`}: ${curlOf(baseUrl, sent.request, sent.secrets)}`)
    }
    process.stdout.write(`${listed.join('\n')}\n${verification.requests} requests would be sent (seed ${verification.seed}).\n`)
    return 0
  }

  const http = httpTransport(baseUrl, { timeoutMs, connections: options.concurrency })
  const verification = await verify(document, http.send, options).finally(http.close)
  const report = reportOf(verification, path, baseUrl)
  if (values.report !== undefined) writeFileSync(fromUser(values.report), `${JSON.stringify(report, null, 2)}\n`)
  if (values.junit !== undefined) writeFileSync(fromUser(values.junit), junitOf(report))
  process.stdout.write(`${summaryOf(report)}\n`)
  // A run that verified nothing has not passed: a CI job would go green on a document it cannot send.
  if (verification.operations.length === 0) {
    const webhooks = Object.keys(document.webhooks ?? {}).length
    const why = [
      verification.refused.length > 0 && `${verification.refused.length} operation(s) left out, each with why in --report`,
      options.onlySafe && 'with --only-safe, none is a GET, HEAD or OPTIONS',
      webhooks > 0 && `its ${webhooks} webhook(s) are requests the service sends, not ones sent to it`
    ].filter(Boolean)
    process.stderr.write(`Nothing was verified: the document has no operation to send${why.length > 0 ? ` (${why.join('; ')})` : ''}.\n`)
    return 2
  }
  return report.operations.some((o) => o.violations.length > 0) ? 1 : 0
}

// A mistake in the command, or a document it cannot read, says why in one line, with no stack trace.
process.exitCode = await main().catch((err: Error) => {
  const usage = isUsageError(err)
  process.stderr.write(usage ? `${err.message}\n\n${USAGE}` : `npm run verify cannot run: ${err.message}\n`)
  return 2
})
