import type { Server } from 'node:http'
import type { HttpConfig } from '../../http/config.ts'
import { limitOptions } from '../../http/limits.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { CheckName, Violation } from '../verify/checks.ts'
import type { Report } from '../verify/report.ts'
import { exchangeJudge } from './judge.ts'
import { proxyServer } from './proxy.ts'
import { apiKeyNames } from '../requests/security.ts'
import { replayOf } from './replay.ts'
import { Traffic } from './traffic.ts'

// The proxy's parts put together: forwarding (proxy.ts), each exchange judged (judge.ts) once it
// has passed, each violation told at once with the curl command of its request (replay.ts), and
// all of it kept for the report (traffic.ts). `npm run proxy` (cli/proxy.ts) listens with it.

export interface ValidatingProxy {
  server: Server
  /** The operations the document has but the engine cannot judge, with why. */
  refused: Array<{ operation: string, problem: string }>
  /** Once every exchange that has passed is judged: what the traffic showed. */
  report: (document: string) => Promise<Report>
}

export interface Told {
  /** A violation, as found, with the operation and the curl command of its request. */
  violation: (operation: string, violation: Violation, curl: string) => void
  /** The upstream gave no answer: the proxy answered for it. */
  failure: (operation: string, failure: string) => void
  /** An exchange the judge failed on (a fault of ours): its request line. */
  unjudged: (request: string, problem: string) => void
}

export interface ValidatingProxyOptions {
  http: HttpConfig
  /** The document, read as 3.1, and how messages name it. */
  document: OpenApiDocument
  file: string
  upstream: string
  enabled: ReadonlySet<CheckName>
  /** How long the upstream may take to begin an answer. */
  timeoutMs: number
  told: Told
}

export async function validatingProxy ({ http, document, file, upstream, enabled, timeoutMs, told }: ValidatingProxyOptions): Promise<ValidatingProxy> {
  const judge = await exchangeJudge({ http, document, file, enabled })
  const traffic = new Traffic(judge.routes, judge.refused)
  const keys = apiKeyNames(document)
  const judging = new Set<Promise<void>>()
  // The service's own bounds on a request's arriving (http/limits.ts).
  const { http: bounds, requestTimeout, keepAliveTimeout } = limitOptions(http)
  const { server, settled } = proxyServer({
    upstream,
    judgedBytes: http.bodyLimit,
    timeoutMs,
    errorWriter: judge.errorWriter,
    onExchange (exchange, failure) {
      const path = exchange.url.split('?')[0]
      const judged = judge.judge(exchange, failure).then(({ route, violations, notes }) => {
        if (route === undefined) return traffic.outside(exchange.method, path)
        // The curl command, only for an exchange that shows something.
        const curl = violations.length === 0 ? '' : replayOf(upstream, keys, exchange)
        const operation = `${route.method} ${route.path}`
        traffic.record(route, exchange.answer.status, violations.map((v) => ({ ...v, curl })), notes)
        for (const violation of violations) told.violation(operation, violation, curl)
        if (failure !== undefined) told.failure(operation, failure)
      }, (err: Error) => told.unjudged(`${exchange.method} ${path}`, err.message))
      judging.add(judged)
      judged.finally(() => judging.delete(judged)).catch(() => {})
    }
  }, { ...bounds, requestTimeout, keepAliveTimeout })
  return {
    server,
    refused: judge.refused,
    async report (name) {
      await settled()
      await Promise.all(judging)
      return traffic.report(name, upstream, [...enabled])
    }
  }
}
