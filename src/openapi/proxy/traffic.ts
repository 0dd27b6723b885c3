import type { Report, ReportedViolation } from '../verify/report.ts'
import type { Refusal, RouteSpec } from '../routes/routes.ts'

// What the proxy saw, for its report on exit (the verifier's format, verify/report.ts): one
// entry per operation seen, with its requests, the statuses it was answered with, each distinct
// violation once (with the first request that showed it) and its notes; the operations no
// request reached, and the requests of paths the document does not have. Bounded: so many
// violations and notes an operation, so many requests outside the document.

const MOST_PER_OPERATION = 50
const MOST_OUTSIDE = 1000

interface Seen { route: RouteSpec, requests: number, statuses: Record<string, number>, violations: Map<string, ReportedViolation>, notes: Set<string> }

export class Traffic {
  readonly #started = Date.now()
  readonly #seen = new Map<RouteSpec, Seen>()
  readonly #outside = new Map<string, number>()
  #requests = 0
  readonly #routes: RouteSpec[]
  readonly #refused: Refusal[]

  constructor (routes: RouteSpec[], refused: Refusal[]) {
    this.#routes = routes
    this.#refused = refused
  }

  /** An exchange of an operation of the document, with what was found in it: each violation kept once. */
  record (route: RouteSpec, status: number, violations: ReportedViolation[], notes: string[]): void {
    this.#requests++
    let seen = this.#seen.get(route)
    if (seen === undefined) this.#seen.set(route, seen = { route, requests: 0, statuses: {}, violations: new Map(), notes: new Set() })
    seen.requests++
    seen.statuses[status] = (seen.statuses[status] ?? 0) + 1
    for (const note of notes) if (seen.notes.size < MOST_PER_OPERATION) seen.notes.add(note)
    for (const violation of violations) {
      const key = `${violation.check} ${violation.status} ${violation.detail}`
      if (!seen.violations.has(key) && seen.violations.size < MOST_PER_OPERATION) seen.violations.set(key, violation)
    }
  }

  /** A request of a path the document does not have (one of a method its path does not declare is its first operation's: judge.ts). */
  outside (method: string, path: string): void {
    this.#requests++
    const key = `${method} ${path}`
    if (this.#outside.has(key) || this.#outside.size < MOST_OUTSIDE) this.#outside.set(key, (this.#outside.get(key) ?? 0) + 1)
  }

  report (document: string, upstream: string, checks: string[]): Report {
    const seen = [...this.#seen.values()]
    return {
      document,
      baseUrl: upstream,
      checks,
      requests: this.#requests,
      durationMs: Date.now() - this.#started,
      chains: { resources: 0, requests: 0 },
      operations: seen.map(({ route, requests, statuses, violations, notes }) => ({
        method: route.method,
        path: route.path,
        operationId: route.operationId,
        requests,
        statuses,
        violations: [...violations.values()],
        notes: [...notes]
      })),
      leftOut: this.#refused.map(({ operation, problem }) => ({ operation, problem })),
      coverage: {
        operations: this.#routes.length,
        unseen: this.#routes.filter((route) => !this.#seen.has(route)).map((route) => `${route.method} ${route.path} (${route.operationId})`),
        outside: [...this.#outside].map(([request, count]) => ({ request, count }))
      }
    }
  }
}
