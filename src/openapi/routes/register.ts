import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, preValidationHookHandler } from 'fastify'
import { errorHandler } from '../../http/error-handler.ts'
import { deprecationHeaders } from './deprecation.ts'
import { literalLength } from './path-template.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import type { Limits } from '../requests/bodies.ts'
import { requestValidation } from '../requests/request-validation.ts'
import { acceptCheck, answerer, serializationSchemas, type Answer } from '../answers/responses.ts'
import type { RouteSpec } from './routes.ts'
import { securityHooks, type Checks } from '../requests/security.ts'
import type { Validators } from '../schemas/validation.ts'

// Step two of two: bind each route from routes.ts to its handler, as Fastify's route. A request
// reads top to bottom: the router; onRequest, the deprecation headers, the security checks and
// Accept (406, where the operation declares it) before the body is read; its body parsed
// (bodies.ts); preValidation, parameters and body checked (request-validation.ts); the handler,
// with typed values; its answer sent as the document says (responses.ts) and serialized through
// its schema. Its errors are written by its own error handler, in its document's shape.

/** What a handler is given: the request's typed parts. */
export interface HandlerInput {
  body: unknown
  params: unknown
  query: unknown
  /** Every header, the declared ones typed. */
  headers: Record<string, unknown>
  /** The declared cookie parameters, typed. */
  cookies: Record<string, unknown>
}

export type AnyHandler = (input: HandlerInput) => Promise<Answer>

/** An operation's route handler, as Fastify calls it. */
export type OperationHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>

export interface Binding {
  /** One handler per operationId (typed from generated/ by handler-types.ts, or the mock's). */
  handlers: object
  /** The security checks bound in code, by kind of scheme. */
  checks: Checks
  validators: Validators
  /** Checks every answer against the document (VALIDATE_RESPONSES). */
  validateResponses: boolean
  /** The largest body, a multipart one's parts together, and the largest part. */
  limits: Limits
  /** How each route's errors are written. */
  errorWriter: (route: RouteSpec) => ErrorWriter
  /** How messages name the document. */
  file: string
  /** With traces on, each operation's handler as traced (ops/trace-spans.ts). */
  traced?: (handle: OperationHandler) => OperationHandler
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's spec. */
    openapi?: { route: RouteSpec }
  }
}

/** Every handler matches an operation, and every operation has one. */
export function checkHandlers (routes: RouteSpec[], handlers: Record<string, unknown>): void {
  const declared = new Set(routes.map((route) => route.operationId))
  const missing = [...declared].filter((id) => typeof handlers[id] !== 'function')
  const extra = Object.keys(handlers).filter((id) => !declared.has(id))
  if (missing.length > 0) throw new Error(`no handler for operation(s): ${missing.join(', ')}`)
  if (extra.length > 0) throw new Error(`handler(s) for operation(s) the document does not declare: ${extra.join(', ')}`)
}

export function registerRoutes (app: FastifyInstance, routes: RouteSpec[], document: OpenApiDocument, binding: Binding): void {
  const { checks, validators, file } = binding
  const handlers = binding.handlers as Record<string, AnyHandler>
  checkHandlers(routes, handlers)
  // Every route's security first, so that a document the checks cannot serve registers nothing.
  const secured = routes.map((route) => ({ route, security: securityHooks(route, document, checks, file) }))
  const heads = new Set(routes.filter((route) => route.method === 'HEAD').map((route) => route.url))
  app.decorateRequest('openapi', null)
  // Where two templates can match the same segment (Microsoft Graph's image(width={width}) and
  // image(width={width},height={height}): the first's width takes "5,height=7"), the router tries
  // them in the order they were registered: the one with more text of its own, the narrower, first.
  const narrowerFirst = [...secured].sort((a, b) => literalLength(b.route.path) - literalLength(a.route.path))
  for (const { route, security } of narrowerFirst) {
    const handler = handlers[route.operationId]
    const writer = binding.errorWriter(route)
    const validate = requestValidation(route, document, validators, binding.limits)
    const answer = answerer(route, binding.validateResponses ? validators : undefined)
    const accept = acceptCheck(route)
    const onRequest: onRequestHookHandler[] = [...route.deprecation === undefined ? [] : [deprecationHeaders(route.deprecation)], ...security]
    if (accept !== undefined) onRequest.push((request, _reply, done) => done(accept(request)))
    // A fault of form validate throws (415, 413) is answered by Fastify's hook runner, as one passed to done.
    const preValidation: preValidationHookHandler = (request, _reply, done) => {
      const checked = validate(request)
      if (checked instanceof Promise) checked.then((fault) => done(fault), done)
      else done(checked)
    }
    // Named for its operation, as traces and profiles show it.
    const handle = {
      async [route.operationId] (request: FastifyRequest, reply: FastifyReply) {
        const parts = request.openapi!
        const headers = Object.keys(parts.headers).length === 0 ? request.headers : { ...request.headers, ...parts.headers }
        return answer(request, reply, await handler({ body: request.body, params: request.params, query: request.query, headers, cookies: parts.cookies }))
      }
    }[route.operationId]
    app.route({
      method: route.method,
      url: route.url,
      // Only answers have schemas for Fastify: their serializers. Requests are checked in preValidation.
      schema: { response: serializationSchemas(route, document, file) },
      config: { openapi: { route } },
      // The operation's own error handler: its errors in its shape, with nothing looked up per error.
      errorHandler: errorHandler(() => writer),
      exposeHeadRoute: route.method === 'GET' && !heads.has(route.url),
      // onRequest runs before the body is read, so an anonymous request never reaches validation.
      onRequest,
      preValidation,
      handler: binding.traced?.(handle) ?? handle
    })
  }
}
