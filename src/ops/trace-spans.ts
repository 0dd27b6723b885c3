import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type SpanContext, type SpanStatus } from '@opentelemetry/api'
import type { FastifyInstance, FastifyPluginCallback, FastifyReply } from 'fastify'
import type { OperationHandler } from '../openapi/routes/register.ts'
import type { GuardTracer } from '../security/auth.ts'
import type { CommitTracer } from '../store/group-commit.ts'
import type { RowResult } from '../store/store.ts'
import type { KeptSpan } from './kept-span.ts'
import type { Tracing } from './tracing.ts'

// The request's span, and what shows where its time went: attributes on it as each part ends,
// its outcome and how long it took (the bearer guard; validation, the body read and checked; the
// handler and its answer are the rest, to the span's end), and the group commit, which serves many
// requests and so is a span of its own, linked to each create it holds, and they to it. Timed
// attributes, not events: an event is four objects more a kept span holds until its export, and
// measured dearer (docs/performance.md, "Traces"). Every log line of a traced request carries its
// trace_id and span_id. Attributes name outcomes, kinds and times, never a token, its hash, or a body.
//
// A request the sampler dropped has nothing: each hook here finds nothing on it and returns. A kept
// request's span is a record until it ends (kept-span.ts): the hooks here write its attributes, and
// the commit its link. So is a commit's.

// A failed request's span status.
const FAILED: SpanStatus = Object.freeze({ code: SpanStatusCode.ERROR })
// A kept request and where it is; null on every other request.
const TRACED = Symbol('traced request')
// A traced request's ids, kept on its logger (Fastify gives request and reply one) for the lines
// it writes: cheaper, measured, than a child logger with its ids bound or a WeakMap beside the loggers.
const LOGGED_SPAN = Symbol('logged span')
// The kept request whose handler is running, for its create to hand to its commit: set around the
// handler's synchronous start (traceHandler; the handler calls the store's create before its first
// await), not an AsyncLocalStorage, which measured dearer for every request once some run in one
// (docs/performance.md, "Traces").
let handling: KeptSpan | undefined

// A kept request, where it is (at its guard, past it with its body being read and checked, or at
// its handler), and when its last part ended (performance.now()).
interface Traced { kept: KeptSpan, at: 'guard' | 'validation' | 'handler', since: number }

declare module 'fastify' {
  interface FastifyRequest {
    [TRACED]: Traced | null
  }
}

/** A part's time: the milliseconds since the part before it ended (or the span began). */
function lap (traced: Traced): number {
  const now = performance.now()
  const ms = now - traced.since
  traced.since = now
  return ms
}

/**
 * A kept request's span ends with its answer: on its response's 'finish', or its 'error', where
 * Fastify runs its onResponse hooks. Listened to on a kept request alone: an onResponse hook runs
 * for every request, and a dropped one paid some 2% of its CPU for the two (docs/performance.md, "Traces").
 */
function answered (tracing: Tracing, kept: KeptSpan, reply: FastifyReply): void {
  const response = reply.raw
  const ended = (): void => {
    response.off('finish', ended)
    response.off('error', ended)
    kept.attributes['http.response.status_code'] = reply.statusCode
    // HTTP semantic conventions: a server span fails with a 4xx or 5xx, error.type its code.
    if (reply.statusCode >= 400) {
      kept.attributes['error.type'] = String(reply.statusCode)
      kept.status = FAILED
    }
    tracing.end(kept)
  }
  response.on('finish', ended)
  response.on('error', ended)
}

/** What an untraced request's guard ends with: nothing. */
const notTraced = (): void => {}

/**
 * pino's mixin: every line a traced request logs carries its trace_id and span_id. Read from the
 * request's logger only when a line is written, so a request that logs nothing pays nothing.
 */
export function traceIds (_line: object, _level: number, logger: object): object {
  const ids = (logger as { [LOGGED_SPAN]?: SpanContext })[LOGGED_SPAN]
  if (ids === undefined) return {}
  return { trace_id: ids.traceId, span_id: ids.spanId }
}

/** The root: each request's span, from its arrival to its answer's end, and the logs joined to it. */
export function tracePlugin (tracing: Tracing): FastifyPluginCallback {
  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorateRequest(TRACED, null)
    // First of all hooks: the sampler decides, and only a kept request is recorded.
    app.addHook('onRequest', (request, reply, next) => {
      const kept = tracing.arrive(request)
      if (kept !== undefined) {
        request[TRACED] = { kept, at: 'guard', since: kept.start }
        ;(request.log as { [LOGGED_SPAN]?: SpanContext })[LOGGED_SPAN] = kept.spanContext()
        answered(tracing, kept, reply)
      }
      next()
    })
    done()
  }
  ;(plugin as any)[Symbol.for('skip-override')] = true
  return plugin
}

/** The bearer guard's end: its outcome, the kind of token, its time. */
export const guardTracer: GuardTracer = {
  start (request) {
    const traced = request[TRACED]
    if (traced === null) return notTraced
    return (outcome, kind) => {
      const { attributes } = traced.kept
      attributes['plant_store.auth.outcome'] = outcome
      attributes['plant_store.auth.token_kind'] = kind
      attributes['plant_store.auth.duration_ms'] = lap(traced)
      if (outcome === 'accepted') traced.at = 'validation'
    }
  }
}

/**
 * An operation's handler, traced: on a kept request, validation's end (the body read, parsed and
 * checked) as the handler starts, and the handler run as the kept request's, so that its create
 * finds the request to link its commit to. A wrapper, not a preHandler hook: a hook runs for every
 * request, and a dropped one paid some 2% of its CPU for the two (docs/performance.md, "Traces").
 */
export function traceHandler (handle: OperationHandler): OperationHandler {
  return (request, reply) => {
    const traced = request[TRACED]
    if (traced === null) return handle(request, reply)
    traced.at = 'handler'
    traced.kept.attributes['plant_store.validation.outcome'] = 'valid'
    traced.kept.attributes['plant_store.validation.duration_ms'] = lap(traced)
    handling = traced.kept
    try {
      return handle(request, reply)
    } finally {
      handling = undefined
    }
  }
}

/** Validation's failure, in the API's scope: its outcome and time as the request fails before its handler. */
export function traceValidation (app: FastifyInstance): void {
  app.addHook('onError', (request, _reply, error, next) => {
    const traced = request[TRACED]
    // A client's error past the guard (and its rate limit) and before the handler is the body's:
    // unreadable, or invalid.
    const status = (error as { statusCode?: number }).statusCode ?? 500
    if (traced !== null && traced.at === 'validation' && status < 500) {
      traced.kept.attributes['plant_store.validation.outcome'] = 'invalid'
      traced.kept.attributes['plant_store.validation.duration_ms'] = lap(traced)
    }
    next()
  })
}

/** The group commit's spans, for a store of `system` (sqlite, postgresql). */
export function commitTracer (tracing: Tracing, system: string): CommitTracer {
  return {
    // A create arrives in its kept request's handler (traceValidation), or in none.
    capture: () => handling,
    async trace (links, commit) {
      const creates = (links as Array<KeptSpan | undefined>).filter((kept): kept is KeptSpan => kept !== undefined)
      if (creates.length === 0) return await commit()
      // A trace of its own: it belongs to no one request more than to the others (and its first
      // create may be one the sampler dropped).
      const span = tracing.begin('group commit', SpanKind.INTERNAL, { 'db.system.name': system, 'plant_store.batch.size': links.length }, creates.map((create): Link => ({ context: create.spanContext() })))
      // And each create's span to the commit that held it: a slow create shows its commit.
      for (const create of creates) create.links.push({ context: span.spanContext() })
      try {
        // PostgreSQL's statements (the pg instrumentation) are this span's children.
        const results = await context.with(trace.setSpan(ROOT_CONTEXT, trace.wrapSpanContext(span.spanContext())), commit)
        Object.assign(span.attributes, outcomes(results))
        return results
      } catch (err) {
        span.status = { code: SpanStatusCode.ERROR, message: (err as Error).message }
        throw err
      } finally {
        tracing.end(span)
      }
    }
  }
}

/** How many creates of a commit were created, replayed, conflicted or failed. */
function outcomes (results: RowResult[]): Record<string, number> {
  let created = 0
  let replayed = 0
  let conflict = 0
  for (const result of results) {
    if (result === 'created') created++
    else if (result === 'replayed') replayed++
    else if (result === 'conflict') conflict++
  }
  return { 'plant_store.batch.created': created, 'plant_store.batch.replayed': replayed, 'plant_store.batch.conflict': conflict, 'plant_store.batch.failed': results.length - created - replayed - conflict }
}
