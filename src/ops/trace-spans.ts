import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Span } from '@opentelemetry/api'
import type { FastifyInstance, FastifyPluginCallback } from 'fastify'
import type { GuardTracer } from '../security/auth.js'
import type { CommitTracer } from '../store/group-commit.js'
import type { RowResult } from '../store/store.js'
import type { Tracing } from './tracing.js'

// The request's span, and what shows where its time went: events on it as each part ends (the
// bearer guard, with its outcome; validation, the body read and checked; the handler's answer
// is the rest, to the span's end), and the group commit, which serves many requests and so is a
// span of its own, linked to each create it holds, and they to it. Every log line of a traced
// request carries its trace_id and span_id. Attributes name outcomes and kinds, never a token, its
// hash, or a body.
//
// A request the sampler dropped has no span: each hook here finds none on it and returns, and
// nothing else is done for it (no context, no closure, no span that records nothing).

const tracer = trace.getTracer('plant-store')
// A kept request's span and the context that holds it; null on every other request.
const TRACED = Symbol('traced request')
// The trace ids of a traced request, kept on its logger (Fastify gives request and reply one):
// cheaper, measured, than a child logger with them bound or a WeakMap beside the loggers.
const TRACE_IDS = Symbol('trace ids')

// Where a kept request is: at its guard, past it (its body being read and checked), or at its handler.
interface Traced { span: Span, context: Context, at: 'guard' | 'validation' | 'handler' }

declare module 'fastify' {
  interface FastifyRequest {
    [TRACED]: Traced | null
  }
}

/** What an untraced request's guard ends with: nothing. */
const notTraced = (): void => {}

/**
 * pino's mixin: every line a traced request logs carries its trace_id and span_id. Read from the
 * request's logger only when a line is written, so a request that logs nothing pays nothing.
 */
export function traceIds (_line: object, _level: number, logger: object): object {
  return (logger as { [TRACE_IDS]?: object })[TRACE_IDS] ?? {}
}

/** The root: each request's span, from its arrival to its answer's end, and the logs joined to it. */
export function tracePlugin (tracing: Tracing): FastifyPluginCallback {
  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorateRequest(TRACED, null)
    // First of all hooks: the sampler decides, and only a kept request gets a span.
    app.addHook('onRequest', (request, _reply, next) => {
      const kept = tracing.arrive(request)
      if (kept !== undefined) {
        request[TRACED] = { ...kept, at: 'guard' }
        const { traceId, spanId } = kept.span.spanContext()
        ;(request.log as { [TRACE_IDS]?: object })[TRACE_IDS] = { trace_id: traceId, span_id: spanId }
      }
      next()
    })
    app.addHook('onResponse', (request, reply, next) => {
      const traced = request[TRACED]
      if (traced !== null) {
        traced.span.setAttribute('http.response.status_code', reply.statusCode)
        // HTTP semantic conventions: a server span fails with a 4xx or 5xx, error.type its code.
        if (reply.statusCode >= 400) traced.span.setAttribute('error.type', String(reply.statusCode)).setStatus({ code: SpanStatusCode.ERROR })
        traced.span.end()
      }
      next()
    })
    done()
  }
  ;(plugin as any)[Symbol.for('skip-override')] = true
  return plugin
}

/** The bearer guard's end: an event with its outcome and the kind of token. */
export const guardTracer: GuardTracer = {
  start (request) {
    const traced = request[TRACED]
    if (traced === null) return notTraced
    return (outcome, kind) => {
      traced.span.addEvent('bearer guard', { 'plant_store.auth.outcome': outcome, 'plant_store.auth.token_kind': kind })
      if (outcome === 'accepted') traced.at = 'validation'
    }
  }
}

/**
 * Validation's end, in the API's scope: an event as the handler starts (the body read, parsed and
 * checked) or as the request fails before it; and the handler run in the request's context, so
 * that its create finds the span to link its commit to.
 */
export function traceValidation (app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, next) => {
    const traced = request[TRACED]
    if (traced === null) return next()
    traced.at = 'handler'
    traced.span.addEvent('validation', { 'plant_store.validation.outcome': 'valid' })
    context.with(traced.context, next)
  })
  app.addHook('onError', (request, _reply, error, next) => {
    const traced = request[TRACED]
    // A client's error past the guard (and its rate limit) and before the handler is the body's:
    // unreadable, or invalid.
    const status = (error as { statusCode?: number }).statusCode ?? 500
    if (traced !== null && traced.at === 'validation' && status < 500) {
      traced.span.addEvent('validation', { 'plant_store.validation.outcome': 'invalid', 'error.type': String(status) })
    }
    next()
  })
}

/** The group commit's spans, for a store of `system` (sqlite, postgresql). */
export function commitTracer (system: string): CommitTracer {
  return {
    // A create arrives in its request's context (traceValidation): a span when kept.
    capture: () => {
      const span = trace.getSpan(context.active())
      return span?.isRecording() === true ? span : undefined
    },
    async trace (links, commit) {
      const creates = (links as Array<Span | undefined>).filter((span): span is Span => span !== undefined)
      if (creates.length === 0) return await commit()
      // A trace of its own: it belongs to no one request more than to the others (and its first
      // create may be one the sampler dropped).
      const root = ROOT_CONTEXT
      const span = tracer.startSpan('group commit', {
        kind: SpanKind.INTERNAL,
        links: creates.map((create): Link => ({ context: create.spanContext() })),
        attributes: { 'db.system.name': system, 'plant_store.batch.size': links.length }
      }, root)
      // And each create's span to the commit that held it: a slow create shows its commit.
      for (const create of creates) create.addLink({ context: span.spanContext() })
      try {
        // PostgreSQL's statements (the pg instrumentation) are this span's children.
        const results = await context.with(trace.setSpan(root, span), commit)
        span.setAttributes(outcomes(results))
        return results
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message })
        throw err
      } finally {
        span.end()
      }
    }
  }
}

/** How many creates of a commit were created, replayed, conflicted or failed. */
function outcomes (results: RowResult[]): Record<string, number> {
  const counts = { 'plant_store.batch.created': 0, 'plant_store.batch.replayed': 0, 'plant_store.batch.conflict': 0, 'plant_store.batch.failed': 0 }
  for (const result of results) counts[`plant_store.batch.${typeof result === 'string' ? result : 'failed'}`]++
  return counts
}
