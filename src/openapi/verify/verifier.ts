import fc from 'fast-check'
import type { OpenApiDocument } from '../document/document.ts'
import { undefinedSchemeOf } from '../requests/security.ts'
import { routeList, type Refusal, type RouteSpec } from '../routes/routes.ts'
import { createValidators } from '../schemas/validation.ts'
import { planner, SOURCES, Unbuildable, type Case, type Fault, type Planner, type Source } from './cases.ts'
import { CHECKS, judge, noAnswer, type Answer, type CheckName, type Judge, type LinkedFrom, type Violation } from './checks.ts'
import type { GivenCredentials } from './credentials.ts'
import { DEFAULTS } from './defaults.ts'
import { linkedValues, linksOf } from './links.ts'
import { chainMemory, chainOf, creatorOf, sequences, type SentStep } from './sequences.ts'
import type { HttpRequest } from './spelling.ts'
import { inferResources } from '../routes/resources.ts'

// Verifies a running service against its document: for every operation the document has, the
// requests cases.ts makes, each answer judged by the checks of checks.ts; where its path names
// what a create makes besides its own resource (the shelf of /shelves/{shelfId}/books), that made
// first (sequences.ts), and named by each of its requests. Bounded everywhere: in
// requests, in time, in the operations verified at once, and in what a failure's shrinking may
// send. A 429 with Retry-After is waited for and sent again, up to a bound, and not judged. The
// first valid request answered with a status whose answer declares links is followed by each
// link's request, once (links.ts), judged as its target's. Then each resource the document
// describes is followed through a chain of requests, create to delete (sequences.ts), and each
// other operation (and each chain's create) whose body names what a create makes, or whose path
// does where that could not be made first for it, is sent with that made first; no create is sent
// where only safe operations are. It knows nothing of HTTP: a
// transport sends (http.ts over the network; the tests' inject()).

/** Sends a request, and answers what came back; throws when nothing did (a refused connection, a timeout: the service's failure), or a VerifierLimit (checks.ts). */
export type Transport = (request: HttpRequest) => Promise<Answer>

export interface VerifyOptions {
  /** Where the requests go, for a link's $url. */
  baseUrl?: string
  credentials?: GivenCredentials
  /** The checks to run; every one by default. */
  checks?: ReadonlySet<CheckName>
  /** Makes the generated values; the same seed, the same requests. */
  seed: number
  /** Valid requests drawn from the schemas per operation, besides the examples and samples. */
  generated?: number
  /** Only GET, HEAD and OPTIONS operations. */
  onlySafe?: boolean
  /** At most this many requests in all, counting retries and shrinking. */
  maxRequests?: number
  /** Stop sending after this long. */
  timeLimitMs?: number
  /** Operations verified at once. */
  concurrency?: number
  /** At most this many requests to shrink one failing value. */
  shrinkRequests?: number
  /** A 429 is sent again at most this many times, after its Retry-After (at most maxRetryAfterMs). */
  retries429?: number
  maxRetryAfterMs?: number
  /** Told as each operation is done. */
  progress?: (done: number, of: number, requests: number, violations: number) => void
}

/** One request sent, what it was (and the exchange a link made it from) and what came back. */
export interface Sent { kind: Case['kind'], source: Source, fault?: Fault, breaks?: string, from?: LinkedFrom, request: HttpRequest, secrets: Case['secrets'], status?: number, error?: string }

/** A violation, the request that showed it, and for one of a sequence, every request of it in order (the last that request). */
export interface FoundViolation extends Violation { request: HttpRequest, secrets: Case['secrets'], source: Source, fault?: Fault, shrunk?: boolean, steps?: SentStep[] }

export interface OperationResult {
  method: string
  /** As the document writes it. */
  path: string
  operationId: string
  requests: number
  violations: FoundViolation[]
  /** Why the operation could be verified only in part (no valid request could be made), or not at all (left out by the bounds). */
  notes: string[]
  sent: Sent[]
}

export interface Verification {
  seed: number
  operations: OperationResult[]
  /** Operations of the document that no request can reach, with why. */
  refused: Refusal[]
  requests: number
  durationMs: number
  /** What ended the run before every operation was verified. */
  stopped?: string
  /** The resources followed in sequences, and the requests their chains sent (shrinking too). */
  chains: { resources: number, requests: number }
  /** What the answers say of the run itself, not of an operation: a base URL the document's paths may not begin at. */
  warnings: string[]
}

// Where a request came from, as a judge's detail names it: one fault found by several kinds of request is one violation.
const SOURCE_NAMED = new RegExp(` \\((${SOURCES.join('|')})\\)`)

// Operations whose requests change nothing: what --only-safe sends.
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])
// The methods an API's operations take (HEAD, OPTIONS and TRACE are HTTP's own): each one a path
// does not declare is sent to it once, to be answered 405 (unsupported_method).
const PROBED = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH']

/**
 * Whether an operation of the document, of `method`, takes the concrete `path` (each parameter of
 * its template a segment, an empty one too, as Fastify's router takes it): the engine routes the
 * request there, its own template's or another's (GitLab's PUT /services/asana takes
 * /services/{slug}'s URL of that slug; Superset's PUT /dashboard/{pk}, /dashboard/). One the
 * engine cannot serve is declared all the same.
 */
function declaredAt (routes: RouteSpec[], refused: Refusal[]): (method: string, path: string) => boolean {
  const operations = [...routes.map(({ method, path }) => `${method} ${path}`), ...refused.map(({ operation }) => operation)].map((operation) => {
    const [method, template] = [operation.slice(0, operation.indexOf(' ')), operation.slice(operation.indexOf(' ') + 1)]
    return { method, takes: new RegExp(`^${template.split(/\{[^}]+\}/).map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`) }
  })
  return (method, path) => operations.some((operation) => operation.method === method && operation.takes.test(path))
}

/** A seed for each operation, from the run's and the operation's own: its requests do not depend on the order operations run in. */
function operationSeed (seed: number, route: RouteSpec): number {
  let hash = 0x811c9dc5 ^ seed
  for (const char of `${route.method} ${route.path}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193)
  return hash | 0
}

export async function verify (doc: OpenApiDocument, send: Transport, options: VerifyOptions): Promise<Verification> {
  const settings = { ...DEFAULTS, ...options }
  const started = Date.now()
  const { routes, refused } = routeList(doc)
  // What the engine cannot serve it cannot verify: an operation whose security names no scheme of
  // the document. Nor one that only switches protocols (101, a WebSocket handshake): its answer is
  // the start of another protocol, which no HTTP request of the verifier's follows.
  const switching = (route: RouteSpec): string | undefined => route.responses.length > 0 && route.responses.every((r) => r.status.startsWith('1'))
    ? `answers only ${route.responses.map((r) => r.status).join(', ')}, switching protocols (a WebSocket handshake): HTTP requests alone do not verify it`
    : undefined
  const served = routes.filter((route) => {
    const problem = undefinedSchemeOf(route, doc) ?? switching(route)
    if (problem !== undefined) refused.push({ operation: `${route.method} ${route.path}`, pointer: route.pointer, problem })
    return problem === undefined
  })
  const chosen = served.filter((route) => !settings.onlySafe || SAFE.has(route.method))
  const validators = createValidators(doc)
  const checks = settings.checks ?? new Set<CheckName>(CHECKS)
  // The methods each path does not declare are sent by its first operation chosen, only for the
  // check that judges them; GET alone where only safe requests go.
  const declared = declaredAt(routes, refused)
  const probing = new Map<string, RouteSpec>()
  if (checks.has('unsupported_method')) for (const route of chosen) if (!probing.has(route.url)) probing.set(route.url, route)
  const probed = PROBED.filter((method) => !settings.onlySafe || SAFE.has(method))
  // A link's target is planned and judged as the target itself is, made once for every operation linking to it.
  const targets = new Map<RouteSpec, { plan: Planner, judged: Judge }>()
  const targetOf = (route: RouteSpec): { plan: Planner, judged: Judge } => {
    let target = targets.get(route)
    if (target === undefined) targets.set(route, target = { plan: planner(doc, route, validators, settings.credentials ?? {}), judged: judge(doc, route, validators, checks) })
    return target
  }
  let requests = 0
  let violations = 0
  let stopped: string | undefined
  const timeLimit = `the time limit of ${Math.round(settings.timeLimitMs / 1000)} s`
  const budgetLeft = (): boolean => {
    if (requests >= settings.maxRequests) stopped ??= `the bound of ${settings.maxRequests} requests`
    else if (Date.now() - started >= settings.timeLimitMs) stopped ??= timeLimit
    return stopped === undefined
  }

  /** Sends, waiting out a 429's Retry-After (bounded) and sending again; undefined when the bounds are spent. */
  const exchange = async (request: HttpRequest, result: OperationResult): Promise<Answer | Error | undefined> => {
    for (let attempt = 0; ; attempt++) {
      if (!budgetLeft()) return undefined
      requests++
      result.requests++
      let answer: Answer
      try {
        answer = await send(request)
      } catch (err) {
        return err as Error
      }
      const wait = retryAfterMs(answer)
      if (answer.status !== 429 || wait === undefined || attempt === settings.retries429) return answer
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, settings.maxRetryAfterMs)))
    }
  }

  // The resources the document describes (routes/resources.ts), where their creates may be sent;
  // their chains and what they make first, each request counted as the operation's it is for.
  const followed = settings.onlySafe ? [] : inferResources(doc, chosen).resources.filter((r) => creatorOf(r) !== undefined && r.operations.read !== undefined)
  const chains = { resources: 0, requests: 0 }
  const memory = chainMemory()
  const chainsOf = (owner: OperationResult) => sequences(doc, validators, followed, (route) => targetOf(route).plan, (route) => targetOf(route).judged, async (request) => {
    chains.requests++
    return await exchange(request, owner)
  }, checks, settings.seed, memory)
  // The operations whose requests named what was made first for them.
  const madeFor = new Set<RouteSpec>()

  const verifyOperation = async (route: RouteSpec): Promise<OperationResult> => {
    const result: OperationResult = { method: route.method, path: route.path, operationId: route.operationId, requests: 0, violations: [], notes: [], sent: [] }
    const judged = judge(doc, route, validators, checks)
    // What its path names made first (the shelf of POST /shelves/{shelfId}/books), so that its
    // requests reach what the service does with them, not its 404 for a shelf that is not there.
    const first = followed.length === 0 ? undefined : await chainsOf(result).pathMadeFirst(route)
    if (first !== undefined && Object.keys(first.path).length > 0) madeFor.add(route)
    const plan = planner(doc, route, validators, settings.credentials ?? {}, first?.path)
    /** Sends a case and judges its answer (by a link's target's judge, after `from`): its violations; undefined when nothing was sent. */
    const run = async (sent: Case, judgedBy = judged, from?: LinkedFrom): Promise<Violation[] | undefined> => {
      const answer = await exchange(sent.request, result)
      if (answer === undefined) return undefined
      const record: Sent = { kind: sent.kind, source: sent.source, ...(sent.fault !== undefined && { fault: sent.fault }), ...(sent.breaks !== undefined && { breaks: sent.breaks }), ...(from !== undefined && { from }), request: sent.request, secrets: sent.secrets }
      result.sent.push(record)
      if (answer instanceof Error) {
        record.error = answer.message
        return noAnswer(answer, checks)
      }
      record.status = answer.status
      if (sent.kind === 'valid' && from === undefined) await follow(sent, answer)
      return judgedBy(sent, answer, from)
    }
    // A fault is reported once: found by the example, the sample and a generated value alike, it
    // is one violation, shown by the first request that found it, or by the shrunk one.
    const kept = new Map<string, number>()
    const keep = (sent: Case, found: Violation[], shrunk?: boolean): void => {
      for (const violation of found) {
        const distinct = `${violation.check} ${violation.status} ${violation.detail.replace(SOURCE_NAMED, '')}`
        const at = kept.get(distinct)
        if (at !== undefined && shrunk !== true) continue
        const entry = {
          ...violation,
          request: sent.request,
          secrets: sent.secrets,
          source: sent.source,
          ...(sent.fault !== undefined && { fault: sent.fault }),
          ...(shrunk !== undefined && { shrunk }),
          // Where what it names was made first, the requests that made it: the request alone names what is not there.
          ...(first !== undefined && first.sent.length > 0 && { steps: [...first.sent, { step: 'request' as const, route, request: sent.request, secrets: sent.secrets, status: violation.status }] })
        }
        if (at === undefined) kept.set(distinct, result.violations.push(entry) - 1)
        else result.violations[at] = entry
      }
    }
    // Each link of the operation's answers followed once, from the first valid request answered with its status.
    const linksFollowed = new Set<string>()
    const follow = async (sent: Case, answer: Answer): Promise<void> => {
      const { links, unfollowable } = linksOf(route, answer.status, chosen)
      for (const note of unfollowable) if (!result.notes.includes(note)) result.notes.push(note)
      for (const link of links) {
        const key = `${answer.status} ${link.name}`
        if (linksFollowed.has(key)) continue
        linksFollowed.add(key)
        const { plan: targetPlan, judged: targetJudged } = targetOf(link.target)
        const context = { request: sent.request, parameters: plan.parameters, values: sent.values, answer, baseUrl: settings.baseUrl ?? 'http://localhost' }
        let linked: Case | Error
        try {
          linked = targetPlan.linked(linkedValues(link, context, targetPlan.parameters))
        } catch (err) {
          if (!(err instanceof Unbuildable)) throw err
          linked = err
        }
        if (linked instanceof Error) {
          result.notes.push(`link ${link.name} of ${answer.status} not followed: ${linked.message}`)
          continue
        }
        const from = { method: route.method, path: route.path, status: answer.status, link: link.name }
        keep(linked, (await run(linked, targetJudged, from) ?? []).map((v) => ({ ...v, detail: `${link.target.method} ${link.target.path} by link ${link.name} of ${answer.status}: ${v.detail}` })))
      }
    }

    let fixed: Case[] = []
    try {
      fixed = plan.fixed()
    } catch (err) {
      if (!(err instanceof Unbuildable)) throw err
      result.notes.push(`no valid request could be made: ${err.message}`)
    }
    // What the sample failed: a request at its bounds that fails the same is not narrowed to a value of its own.
    const sampleFailed = new Set<CheckName>()
    for (const sent of [...fixed, ...plan.invalid()]) {
      const found = await run(sent) ?? []
      if (sent.source === 'sample' && sent.kind === 'valid') for (const v of found) sampleFailed.add(v.check)
      // A request with every value at its bound, failing: shown by the one value alone that still fails, where one does.
      let narrowed: { part: Case, found: Violation[] } | undefined
      for (const part of found.length > 0 && !sampleFailed.has(found[0].check) ? plan.parts(sent) : []) {
        const again = await run(part) ?? []
        if (again.some((v) => v.check === found[0].check)) {
          narrowed = { part, found: again }
          break
        }
      }
      keep(narrowed?.part ?? sent, narrowed?.found ?? found, narrowed !== undefined ? true : undefined)
    }
    // The methods its path does not declare, each on the first valid request's URL, with its
    // credentials and without its body.
    const base = fixed.find((sent) => sent.kind === 'valid')
    for (const method of probing.get(route.url) === route ? probed : []) {
      if (base === undefined) break
      if (declared(method, base.request.path.split('?')[0])) continue
      const headers = Object.fromEntries(Object.entries(base.request.headers).filter(([name]) => !/^content-(type|length)$/i.test(name)))
      const probe: Case = { ...base, kind: 'invalid', fault: 'undeclared method', request: { method, path: base.request.path, headers } }
      keep(probe, await run(probe) ?? [])
    }

    const drawn = plan.generated()
    if (drawn !== undefined && settings.generated > 0) {
      // Values drawn until as many valid ones were sent; one that an answer fails on is shrunk,
      // within its budget of requests, to the smallest that still fails the same check.
      let sentValid = 0
      let failing: { check: CheckName, violations: Violation[], sent: Case, shrunk: boolean } | undefined
      let shrinking = 0
      const property = fc.asyncProperty(drawn.values, async (values) => {
        if (failing === undefined && sentValid >= settings.generated) return true
        const sent = drawn.request(values)
        if (sent === undefined) return true // refused by the engine: not a valid request to send
        if (failing !== undefined && shrinking++ >= settings.shrinkRequests) return true
        if (failing === undefined) sentValid++
        const found = await run(sent)
        if (found === undefined || found.length === 0) return true
        if (failing !== undefined && !found.some((v) => v.check === failing!.check)) return true
        failing = { check: failing?.check ?? found[0].check, violations: found, sent, shrunk: failing !== undefined }
        return false
      })
      const { interrupted } = await fc.check(property, { seed: operationSeed(settings.seed, route), numRuns: settings.generated * 10, endOnFailure: false, interruptAfterTimeLimit: Math.max(1, settings.timeLimitMs - (Date.now() - started)) })
      if (failing !== undefined) keep(failing.sent, failing.violations, failing.shrunk)
      // fast-check stops at the deadline by itself, sending nothing more: the run says it stopped,
      // and this operation that it was cut short. By its own word: its timer may fire a
      // millisecond before Date.now() reaches the deadline.
      if (interrupted) stopped ??= timeLimit
      if (!budgetLeft()) result.notes.push(`verified in part: the run reached ${stopped}`)
    }
    const unanswered = result.sent.filter((s) => s.error !== undefined)
    if (unanswered.length > 0) result.notes.push(`${unanswered.length} of ${result.sent.length} requests got no answer (${unanswered[0].error})`)
    // Every valid request refused for its credentials says more about the credentials than the service.
    const valid = result.sent.filter((s) => s.kind === 'valid' && s.status !== undefined)
    if (valid.length > 0 && valid.every((s) => s.status === 401 || s.status === 403)) result.notes.push(`every valid request was answered ${[...new Set(valid.map((s) => s.status))].join(' or ')}: are the credentials given the ones it takes?`)
    violations += result.violations.length
    return result
  }

  const results: OperationResult[] = new Array(chosen.length)
  let next = 0
  let done = 0
  const worker = async (): Promise<void> => {
    while (next < chosen.length) {
      const i = next++
      const route = chosen[i]
      if (!budgetLeft()) {
        results[i] = { method: route.method, path: route.path, operationId: route.operationId, requests: 0, violations: [], notes: [`not verified: the run reached ${stopped}`], sent: [] }
      } else {
        results[i] = await verifyOperation(route)
      }
      settings.progress?.(++done, chosen.length, requests, violations)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, settings.concurrency) }, worker))

  // Each resource in a chain of requests, one after another, within the same bounds; its violations the operation's that did wrong.
  const resultOf = new Map(chosen.map((route, i) => [route, results[i]]))
  for (const resource of followed) {
    if (!budgetLeft()) break
    // Its requests counted as its create's (a PUT's, where that makes its items).
    const owner = resultOf.get(creatorOf(resource)!)!
    const chained = chainsOf(owner)
    const ran = await chained.run(resource, chainOf(resource))
    if (ran === undefined) break
    chains.resources++
    if (ran.note !== undefined) owner.notes.push(`sequence of ${resource.item} not followed to its end: ${ran.note}`)
    for (const refused of ran.refused) owner.notes.push(`sequence of ${resource.item}: ${refused}`)
    // The chain's violation, and its answers' that their operations do not have already (a read's 200 is often judged only here).
    const failing = [
      ...ran.violation === undefined ? [] : [{ violation: ran.violation, steps: ran.steps }],
      ...ran.answers.filter((v) => !(resultOf.get(v.route) ?? owner).violations.some((found) => found.check === v.check && found.status === v.status)).map((v) => ({ violation: v, steps: v.chain }))
    ]
    for (const found of failing) {
      const { check, status, detail, steps, route } = await chained.shrink(resource, found.violation, found.steps, { left: settings.shrinkRequests })
      const last = steps.at(-1)!
      const result = resultOf.get(route) ?? owner
      result.violations.push({ check, status, detail, request: last.request, secrets: steps.flatMap((step) => step.secrets), source: 'sequence', steps, ...(steps.length < found.violation.steps.length && { shrunk: true }) })
      violations++
    }
  }

  // Each operation outside the chains, and each chain's create, whose path or body names what a
  // create makes (POST /shelves/{shelfId}/labels, {"shelfId": …}), sent once more with that made
  // first. Its valid requests refused as bad data (positive_data_acceptance) named keys nothing
  // made: accepted now, they were the verifier's fault, not the service's, and are withdrawn, with
  // a note; refused still, the refusal is reported with the requests that made what it names.
  const creates = new Set(followed.map(creatorOf))
  const inChains = new Set(followed.flatMap((resource) => Object.values(resource.operations)))
  for (const route of chosen) {
    if (!budgetLeft()) break
    const owner = resultOf.get(route)!
    const chained = chainsOf(owner)
    if ((inChains.has(route) && !creates.has(route)) || !chained.refersTo(route, madeFor.has(route))) continue
    const ran = await chained.referring(route, targetOf(route).judged)
    if (ran === undefined) break
    if ('note' in ran) {
      owner.notes.push(`not sent with what it names made first: ${ran.note}`)
      continue
    }
    const sent = ran.steps.at(-1)!
    const accepted = sent.status! < 400
    if (accepted || ran.violations.some((v) => v.check === 'positive_data_acceptance')) {
      // Its own requests' refusals, not a link's (another operation's, reported here).
      const named = (v: FoundViolation): boolean => v.check === 'positive_data_acceptance' && v.source !== 'link'
      const refused = owner.violations.filter(named)
      owner.violations = owner.violations.filter((v) => !named(v))
      violations -= refused.length
      if (accepted && refused.length > 0) owner.notes.push(`${refused.length} valid request(s) refused (${refused.map((v) => v.status).join(', ')}) named what did not exist: with it made first (${ran.steps.slice(0, -1).map((step) => `${step.request.method} ${step.request.path}`).join(', ')}), the request was answered ${sent.status}`)
    }
    for (const { check, status, detail, steps } of ran.violations) {
      if (owner.violations.some((v) => v.check === check && v.status === status)) continue
      owner.violations.push({ check, status, detail, request: sent.request, secrets: steps.flatMap((step) => step.secrets), source: 'sequence', steps })
      violations++
    }
  }
  return { seed: settings.seed, operations: results, refused, requests, durationMs: Date.now() - started, ...(stopped !== undefined && { stopped }), chains, warnings: baseUrlWarnings(doc, results) }
}

/**
 * No answer at all, or every answer 404: the base URL given is most likely not where the service
 * is, or not where the document's paths begin (a base path left out, or one too many), and then
 * nothing was verified; Schemathesis warns alike.
 */
function baseUrlWarnings (doc: OpenApiDocument, results: OperationResult[]): string[] {
  const statuses = results.flatMap((result) => result.sent.flatMap((sent) => sent.status ?? []))
  const unanswered = results.flatMap((result) => result.sent.flatMap((sent) => sent.error ?? []))
  if (statuses.length === 0 && unanswered.length > 0) return [`no request was answered (all ${unanswered.length}; ${unanswered[0]}): the service is not at the base URL given, or not up`]
  if (statuses.length === 0 || statuses.some((status) => status !== 404)) return []
  const servers = (Array.isArray(doc.servers) ? doc.servers : []).map((server) => server?.url).filter((url): url is string => typeof url === 'string')
  return [`every answer was 404 (all ${statuses.length}): the document's paths may not begin at the base URL given${servers.length === 0 ? '' : ` (its servers: ${servers.join(', ')})`}`]
}

/** A 429's Retry-After, in milliseconds: seconds, or an HTTP date. */
function retryAfterMs (answer: Answer): number | undefined {
  const header = answer.headers['retry-after']
  if (header === undefined) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header) * 1000
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}
