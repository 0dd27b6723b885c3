import type { FastifyInstance } from 'fastify'
import type { HttpConfig } from '../../http/config.ts'
import { cors } from '../../http/cors.ts'
import { overloadProtection } from '../../http/limits.ts'
import { REASONS } from '../../http/reasons.ts'
import { bodyParsers } from '../requests/bodies.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { errorWriters, type ErrorWriter } from '../answers/error-shapes.ts'
import { registerMethodAnswers } from './methods.ts'
import { registerRoutes, type Binding } from './register.ts'
import type { RouteSpec } from './routes.ts'
import type { Checks } from '../requests/security.ts'
import type { Validators } from '../schemas/validation.ts'

export interface ApiOptions {
  http: HttpConfig
  /** The document as the engine reads it (3.1: upgrade.ts), and its routes. */
  document: OpenApiDocument
  routes: RouteSpec[]
  /** How messages name the document. */
  file: string
  /** One handler per operationId. */
  handlers: object
  /** Registers in the API's scope what its security checks need, and gives them by kind of scheme. */
  checks: (scope: FastifyInstance) => Promise<Checks>
  validators: Validators
  /** Told how errors outside every operation are written: the shape the document's errors share. */
  onErrorWriter?: (writer: ErrorWriter) => void
  tracing?: ApiTracing
}

/** What a trace shows of the API's parts (ops/trace-spans.ts), when traces are on. */
export interface ApiTracing {
  /** Marks, in the API's scope, validation's failure on the request's span. */
  validation: (app: FastifyInstance) => void
  /** Each operation's handler as traced: validation's end marked as it starts, and run as the request's. */
  handler: Binding['traced']
}

/**
 * The API's own encapsulated scope: every operation in the document, behind its security.
 * Nothing registered here reaches /docs or the health probes.
 */
export async function api (app: FastifyInstance, { http, document, routes, file, handlers, checks, validators, onErrorWriter, tracing }: ApiOptions): Promise<void> {
  // First, so that every answer to an allowed origin carries CORS headers, 401s and 503s too.
  // A browser may send what the document asks for: its header parameters, and its API keys' headers.
  const headers = [
    ...routes.flatMap((route) => route.parameters.filter((p) => p.in === 'header').map((p) => p.name)),
    ...Object.values<any>(document.components?.securitySchemes ?? {}).filter((s) => s?.type === 'apiKey' && s.in === 'header').map((s) => String(s.name))
  ]
  await cors(app, { origins: http.corsOrigins, routes, headers })
  await overloadProtection(app, { config: http })
  bodyParsers(app, routes, (request) => request.routeOptions.config.openapi?.route)
  const bound = await checks(app)
  tracing?.validation(app)
  const writers = errorWriters(document, routes, validators, REASONS)
  onErrorWriter?.(writers.fallback)
  registerRoutes(app, routes, document, { handlers, checks: bound, validators, validateResponses: http.validateResponses, limits: { bodyBytes: http.bodyLimit, partBytes: http.partLimit, parts: http.maxParts }, errorWriter: writers.forRoute, file, traced: tracing?.handler })
  registerMethodAnswers(app, routes)
}
