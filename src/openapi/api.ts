import type { FastifyInstance } from 'fastify'
import { bearerGuard, type GuardTracer, type JwtGuardObserver } from '../security/auth.js'
import type { HttpConfig } from '../http/config.js'
import { cors } from '../http/cors.js'
import { overloadProtection } from '../http/limits.js'
import type { Handlers } from './handler-types.js'
import type { OpenApiDocument } from './document.js'
import { registerMethodAnswers } from './methods.js'
import { registerRoutes } from './register.js'
import { routesFromDocument } from './routes.js'
import { UnsupportedMediaTypeError } from '../errors.js'
import { jsonBodyParser } from '../http/json-body.js'
import { rateLimits } from '../security/rate-limit.js'
import type { TokenSet } from '../security/tokens.js'
import type { JwtVerifier } from '../security/jwt.js'
import type { SecurityConfig } from '../security/config.js'

export interface ApiOptions {
  http: HttpConfig
  security: SecurityConfig
  document: OpenApiDocument
  handlers: Handlers
  tokens: TokenSet
  /** Access tokens from the identity provider, when JWT_ISSUER is set. */
  jwt?: JwtVerifier
  /** Told of each JWT judged. */
  jwtObserver?: JwtGuardObserver
  tracing?: ApiTracing
}

/** What a trace shows of the API's parts (ops/trace-spans.ts), when traces are on. */
export interface ApiTracing {
  guard: GuardTracer
  /** Marks validation's end on the request's span, and runs the handler in its context. */
  validation: (app: FastifyInstance) => void
}

/**
 * The API's own encapsulated scope: every operation in the document, behind its guards.
 * Nothing registered here reaches /docs or the health probes.
 */
export async function api (app: FastifyInstance, { http, security, document, handlers, tokens, jwt, jwtObserver, tracing }: ApiOptions): Promise<void> {
  const routes = routesFromDocument(document)
  // First, so that every answer to an allowed origin carries CORS headers, 401s and 503s too.
  await cors(app, { origins: http.corsOrigins, routes })
  await overloadProtection(app, { config: http })
  // JSON only: any other media type answers 415 instead of reaching validation.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser)
  app.addContentTypeParser('*', (request, _payload, done) => done(new UnsupportedMediaTypeError(request.headers['content-type'] ?? 'none')))
  const bearer = await bearerGuard(app, tokens, { limits: await rateLimits(app, security), jwt, observer: jwtObserver, tracer: tracing?.guard })
  tracing?.validation(app)
  registerRoutes(app, routes, handlers, document, { 'http:bearer': bearer })
  registerMethodAnswers(app, routes)
}
