import { CHECKS } from './checks.ts'
import { curlOf } from './curl.ts'
import type { OperationResult, Verification } from './verifier.ts'

// What a verification found, for people (a summary: each check's count, each violation with the
// request that shows it as a curl command, or a sequence's every request in order) and for
// programs (one entry per operation, as JSON; a sequence's requests as the violation's steps).
// junit.ts writes it for CI systems.

/** A request of a sequence: what it did, as sent, its answer's status, and its curl command. */
export interface ReportedStep { step: string, request: string, status?: number, curl: string }
export interface ReportedViolation { check: string, status: number, detail: string, curl: string, shrunk?: boolean, steps?: ReportedStep[] }
export interface ReportedOperation {
  method: string
  path: string
  operationId: string
  requests: number
  /** How many answers of each status (the proxy's: what the traffic was answered). */
  statuses?: Record<string, number>
  violations: ReportedViolation[]
  notes: string[]
}
export interface Report {
  document: string
  baseUrl: string
  /** The verifier's: what makes its requests again. */
  seed?: number
  /** The checks judged, where not all of the verifier's (the proxy's). */
  checks?: string[]
  /** The proxy's: how much of the document the traffic reached, and what it sent outside it. */
  coverage?: { operations: number, unseen: string[], outside: Array<{ request: string, count: number }> }
  requests: number
  durationMs: number
  stopped?: string
  /** The resources followed in sequences of requests, and the requests they sent. */
  chains: { resources: number, requests: number }
  operations: ReportedOperation[]
  /** Operations of the document no request can reach, with why. */
  leftOut: Array<{ operation: string, problem: string }>
  /** What the answers say of the run itself (every one 404: a base URL the document's paths may not begin at). */
  warnings?: string[]
}

export function reportOf (verification: Verification, document: string, baseUrl: string): Report {
  return {
    document,
    baseUrl,
    seed: verification.seed,
    requests: verification.requests,
    durationMs: verification.durationMs,
    ...(verification.stopped !== undefined && { stopped: verification.stopped }),
    chains: verification.chains,
    operations: verification.operations.map((o: OperationResult) => ({
      method: o.method,
      path: o.path,
      operationId: o.operationId,
      requests: o.requests,
      violations: o.violations.map((v) => ({
        check: v.check,
        status: v.status,
        detail: v.detail,
        curl: curlOf(baseUrl, v.request, v.secrets),
        ...(v.shrunk !== undefined && { shrunk: v.shrunk }),
        ...(v.steps !== undefined && { steps: v.steps.map((s) => ({ step: s.step, request: `${s.request.method} ${s.request.path}`, ...(s.status !== undefined && { status: s.status }), curl: curlOf(baseUrl, s.request, s.secrets) })) })
      })),
      notes: o.notes
    })),
    leftOut: verification.refused.map(({ operation, problem }) => ({ operation, problem })),
    ...(verification.warnings.length > 0 && { warnings: verification.warnings })
  }
}

const plural = (n: number, word: string): string => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`

/** The summary for a terminal. */
export function summaryOf (report: Report): string {
  const lines: string[] = []
  const flagged = report.operations.filter((o) => o.violations.length > 0)
  for (const operation of flagged) {
    lines.push(`${operation.method} ${operation.path} (${operation.operationId})`)
    for (const v of operation.violations) {
      lines.push(`  ✗ ${v.check}${v.shrunk === true ? ' (shrunk)' : ''}: ${v.detail}`)
      // A sequence's every request, in order, each with what it was answered.
      if (v.steps !== undefined) v.steps.forEach((s, i) => lines.push(`    ${i + 1}. ${s.step}: ${s.request} → ${s.status ?? 'no answer'}`, `       ${s.curl}`))
      else lines.push(`    ${v.curl}`)
    }
  }
  if (flagged.length > 0) lines.push('')
  const counts = new Map<string, number>((report.checks ?? CHECKS).map((check) => [check, 0]))
  for (const v of report.operations.flatMap((o) => o.violations)) counts.set(v.check, (counts.get(v.check) ?? 0) + 1)
  for (const [check, count] of counts) lines.push(`${count === 0 ? '✓' : '✗'} ${check.padEnd(30)} ${count === 0 ? 'nothing found' : plural(count, 'violation')}`)
  const partial = report.operations.filter((o) => o.notes.length > 0)
  const chains = report.chains.resources === 0 ? '' : ` (${plural(report.chains.resources, 'resource')} followed in sequences, with ${plural(report.chains.requests, 'request')} of those)`
  const { coverage } = report
  if (coverage !== undefined) {
    lines.push('', `${plural(report.requests, 'request')} in ${(report.durationMs / 1000).toFixed(1)} s reached ${report.operations.length} of the document's ${plural(coverage.operations, 'operation')}: ` +
      `${flagged.length === 0 ? 'no violation' : `${plural(flagged.length, 'operation')} with violations`}.`)
    if (coverage.unseen.length > 0) lines.push(`Not reached: ${coverage.unseen.join(', ')}.`)
    if (coverage.outside.length > 0) lines.push(`Outside the document: ${coverage.outside.map(({ request, count }) => `${request} (${count})`).join(', ')}.`)
  } else {
    lines.push('', `${plural(report.operations.length, 'operation')} verified with ${plural(report.requests, 'request')} in ${(report.durationMs / 1000).toFixed(1)} s${chains}: ` +
    `${flagged.length === 0 ? 'no violation' : `${plural(flagged.length, 'operation')} (${(100 * flagged.length / Math.max(1, report.operations.length)).toFixed(1)}%) with violations`}.`)
  }
  if (partial.length > 0) lines.push(`${plural(partial.length, 'operation')} verified in part (see the notes in --report).`)
  if (report.leftOut.length > 0) lines.push(`${plural(report.leftOut.length, 'operation')} of the document left out: no request can reach ${report.leftOut.length === 1 ? 'it' : 'them'} (${report.leftOut.map((l) => l.operation).join(', ')}).`)
  if (report.stopped !== undefined) lines.push(`Stopped at ${report.stopped}: what was not sent is not verified.`)
  for (const warning of report.warnings ?? []) lines.push(`Warning: ${warning}.`)
  if (report.seed !== undefined) lines.push(`Seed ${report.seed}: --seed ${report.seed} sends the same requests again.`)
  return lines.join('\n')
}
