import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Span } from '@opentelemetry/api'
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify'
import type { GuardTracer } from '../security/auth.js'
import type { CommitTracer } from '../store/group-commit.js'
import type { RowResult } from '../store/store.js'
import type { Tracing } from './tracing.js'

// The service's own spans, beside @fastify/otel's request and handler spans: the parts of a
// request that cost (the bearer guard, validation) and the group commit, which serves many
// requests and so is a span of its own, linked to each create it holds, and they to it. Every
// log line of a traced request carries its trace_id and span_id. Attributes name outcomes and
// kinds, never a token, its hash, or a body.

const tracer = trace.getTracer('plant-store')
const VALIDATION = Symbol('validation span')
// The span and context of a request whose trace is kept (sampled), set once as it arrives; null
// for every other request, for which the hooks below then do nothing.
const SAMPLED = Symbol('sampled request')
// The trace ids of a traced request, kept on its logger (Fastify gives request and reply one).
const TRACE_IDS = Symbol('trace ids')

declare module 'fastify' {
  interface FastifyRequest {
    [VALIDATION]?: Span | null
    [SAMPLED]?: { span: Span, context: Context } | null
  }
}

/** What an unsampled request's guard span ends with: nothing. */
const notTraced = (): void => {}

/**
 * pino's mixin: every line a traced request logs carries its trace_id and span_id. Read from the
 * request's logger only when a line is written, so a request that logs nothing pays nothing.
 */
export function traceIds (_line: object, _level: number, logger: object): object {
  return (logger as { [TRACE_IDS]?: object })[TRACE_IDS] ?? {}
}

/** The root: @fastify/otel's request spans, the logs joined to them, and each answer's error.type. */
export function tracePlugin (tracing: Tracing): FastifyPluginCallback {
  const plugin: FastifyPluginCallback = (app, _options, done) => {
    // Before @fastify/otel's hook: the sampler decides, and a dropped request makes no span.
    app.addHook('onRequest', (request, _reply, next) => { tracing.arrive(request, next) })
    app.register(tracing.fastify.plugin())
    app.decorateRequest(SAMPLED, null)
    app.after(() => {
      // After @fastify/otel's onRequest, which starts the span of a request the sampler kept
      // (probes and dropped requests have none).
      app.addHook('onRequest', (request, _reply, next) => {
        const { span, context } = request.opentelemetry()
        if (span?.isRecording() === true && context != null) {
          request[SAMPLED] = { span, context }
          const { traceId, spanId } = span.spanContext()
          ;(request.log as { [TRACE_IDS]?: object })[TRACE_IDS] = { trace_id: traceId, span_id: spanId }
        }
        next()
      })
      // HTTP semantic conventions: error.type on a failed request is its status code.
      app.addHook('onSend', (request, reply, payload, next) => {
        if (reply.statusCode >= 400) request[SAMPLED]?.span.setAttribute('error.type', String(reply.statusCode))
        next(null, payload)
      })
    })
    done()
  }
  ;(plugin as any)[Symbol.for('skip-override')] = true
  return plugin
}

/** The bearer guard's span: its outcome and the kind of token. */
export const guardTracer: GuardTracer = {
  start (request) {
    const sampled = request[SAMPLED]
    if (sampled == null) return notTraced
    const span = tracer.startSpan('bearer guard', {}, sampled.context)
    return (outcome, kind) => {
      span.setAttributes({ 'plant_store.auth.outcome': outcome, 'plant_store.auth.token_kind': kind })
      if (outcome !== 'accepted') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome })
      span.end()
    }
  }
}

/** Validation's span, in the API's scope: from the body's first byte to the handler, or to the error. */
export function traceValidation (app: FastifyInstance): void {
  const end = (request: FastifyRequest, error?: Error): void => {
    const span = request[VALIDATION]
    if (span == null) return
    request[VALIDATION] = null
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
    span.end()
  }
  app.addHook('preParsing', (request, _reply, payload, next) => {
    const sampled = request[SAMPLED]
    if (sampled != null) request[VALIDATION] = tracer.startSpan('validation', {}, sampled.context)
    next(null, payload)
  })
  app.addHook('preHandler', (request, _reply, next) => {
    end(request)
    next()
  })
  app.addHook('onError', (request, _reply, error, next) => {
    end(request, error)
    next()
  })
}

/** The group commit's spans, for a store of `system` (sqlite, postgresql). */
export function commitTracer (system: string): CommitTracer {
  return {
    // A create arrives in its handler's span, within its request's trace: kept when sampled.
    capture: () => {
      const span = trace.getSpan(context.active())
      return span?.isRecording() === true ? span : undefined
    },
    async trace (links, commit) {
      const creates = (links as Array<Span | undefined>).filter((span): span is Span => span !== undefined)
      if (creates.length === 0) return await commit()
      // A trace of its own: it belongs to no one request more than to the others (and its first
      // create's context may be a sampled-out request's, with tracing suppressed).
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
  const counts = { created: 0, replayed: 0, conflict: 0, failed: 0 }
  for (const result of results) counts[typeof result === 'string' ? result : 'failed']++
  return Object.fromEntries(Object.entries(counts).map(([outcome, count]) => [`plant_store.batch.${outcome}`, count]))
}
