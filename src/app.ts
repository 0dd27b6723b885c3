import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { AccessLog } from './ops/access-log.ts'
import { api } from './openapi/routes/api.ts'
import type { Config } from './config.ts'
import { docs, titleOf } from './openapi/document/docs.ts'
import { errorHandler, notFoundHandler, plainError } from './http/error-handler.ts'
import { createHandlers } from './handlers/index.ts'
import { health } from './ops/health.ts'
import { connectionLimits, limitOptions } from './http/limits.ts'
import { loadDocument, type LoadedDocument } from './openapi/document/document.ts'
import type { ErrorWriter } from './openapi/answers/error-shapes.ts'
import { routesFromDocument } from './openapi/routes/routes.ts'
import { lazySerializerCompiler } from './openapi/answers/serialization.ts'
import { modelOf } from './openapi/document/upgrade.ts'
import { createValidators } from './openapi/schemas/validation.ts'
import { bearerGuard } from './security/auth.ts'
import { rateLimits } from './security/rate-limit.ts'
import { requestId, echoRequestId } from './http/request-id.ts'
import { API_HEADERS, setHeaders } from './security/headers.ts'
import { openStore } from './store/open.ts'
import { TokenSet } from './security/tokens.ts'
import type { TokensFile } from './security/token-file.ts'
import type { Tracing } from './ops/tracing.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** What the document calls the API (info.title): the start-up line names it. */
    documentTitle: string
    /** Reads the tokens file again (SIGHUP); undefined without one. */
    reloadTokens?: (reason: string) => void
  }
}

type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

export interface BuildOptions {
  /** Where logs go; standard output when not given. */
  logStream?: { write: (line: string) => void }
  /** The accepted tokens, for a caller that replaces them while running; else config.security.apiTokens. */
  tokens?: TokenSet
  /** OpenTelemetry, started by the process before the app (ops/tracing.ts); undefined: no traces. */
  tracing?: Tracing
  /** The contract served; openapi.yaml when not given (tests give variants of it). */
  loaded?: LoadedDocument
  /** API_TOKENS_FILE, followed as it changes (into `tokens`). */
  tokensFile?: TokensFile
}

/** Builds the whole service from an explicit config. Never listens: server.ts does, tests inject. */
export async function buildApp ({ http, store: storeConfig, security, ops }: Config, { logStream, tokens = new TokenSet(security.apiTokens), tracing, loaded, tokensFile }: BuildOptions = {}): Promise<FastifyInstance> {
  const { trustProxy } = http
  loaded ??= await loadDocument()
  // What the service serves, read before anything opens: a document it cannot serve stops the start.
  const file = 'openapi.yaml'
  const document = await modelOf(loaded.document)
  const routes = routesFromDocument(document, file)
  const validators = createValidators(document, file)
  // The service's own spans, and the trace ids in its log lines, load only with tracing.
  const spans = tracing === undefined ? undefined : await import('./ops/trace-spans.ts')
  // Errors outside every operation take the shape the document's errors share, once the API knows it.
  let errorWriter: ErrorWriter = plainError
  const app = Fastify({
    // No line logs request headers (Fastify's req serializer has none; the access line names
    // its fields), so no token reaches the logs, without the cost of pino's redaction per line.
    logger: { level: ops.logLevel, ...(logStream && { stream: logStream }), ...(spans && { mixin: spans.traceIds }) },
    logController: new AccessLog(ops.logLevel),
    genReqId: requestId,
    // Fastify takes a hop count too, but its types do not say so: the same rule, as a function.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    ...limitOptions(http, () => errorWriter),
    // Our compilers from the start, the same ones in every plugin: Fastify then never loads its
    // defaults (a second Ajv with its formats, and fast-json-stringify's), about 10 ms of a start.
    // Its types describe these factories by its default Ajv's; it calls any compiler alike.
    schemaController: { compilersFactory: { buildValidator: () => ({ schema }: { schema: object }) => validators.request(schema), buildSerializer: () => lazySerializerCompiler } as unknown as SchemaCompilers }
  })
  app.decorate('documentTitle', titleOf(document))
  const handleError = errorHandler(() => errorWriter)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFoundHandler(handleError))

  // prom-client is loaded only when metrics are on: it is a good part of a start-up otherwise.
  const metrics = ops.metricsPort === undefined ? undefined : new (await import('./ops/metrics.ts')).Metrics({ maxPendingCreates: storeConfig.maxPending, maxEventLoopDelayMs: http.maxEventLoopDelay })
  if (tracing !== undefined) {
    tracing.logTo(app.log)
    if (metrics !== undefined) tracing.countLost(metrics.lostSpans())
    // First, so that the request's span starts before every other hook runs.
    await app.register(spans!.tracePlugin(tracing))
  }
  const store = await openStore(storeConfig.databaseUrl, {
    pgPoolSize: storeConfig.pgPoolSize,
    timeoutMs: storeConfig.timeoutMs,
    maxPending: storeConfig.maxPending,
    onConnectionError: (err) => app.log.warn({ err }, 'store connection failed; replacing it'),
    observer: metrics?.store,
    tracer: spans === undefined ? undefined : (system) => spans.commitTracer(tracing!, system)
  })
  app.addHook('onClose', async () => await store.close())
  app.decorate('reloadTokens', undefined)
  if (tokensFile !== undefined) {
    const followed = (await import('./security/token-file.ts')).followTokensFile(tokensFile, tokens, app.log, metrics?.tokensFile())
    app.reloadTokens = followed.reload
    app.addHook('onClose', followed.close)
  }

  try {
    // jose and the JWT checks load only when a provider is configured.
    const observed = security.jwt === undefined ? undefined : metrics?.jwtObservers()
    const jwt = security.jwt === undefined
      ? undefined
      : await (await import('./security/jwt.ts')).createJwtVerifier(security.jwt, { log: app.log, observer: observed?.keySet })
    echoRequestId(app)
    setHeaders(app, API_HEADERS, { hsts: true })
    metrics?.serve(app, ops)
    await connectionLimits(app, { config: http })
    await app.register(docs, { loaded })
    await app.register(health, { store })
    await app.register(api, {
      http,
      document,
      routes,
      file,
      handlers: createHandlers({ store }),
      validators,
      onErrorWriter: (writer) => { errorWriter = writer },
      tracing: spans === undefined ? undefined : { validation: spans.traceValidation, handler: spans.traceHandler },
      // The service's one scheme, http bearer: its static tokens, or with JWT_ISSUER a provider's access tokens.
      checks: async (scope) => {
        const limits = await rateLimits(scope, security, security.rateLimit?.redis === undefined ? undefined : metrics?.sharedRateLimit())
        const bearer = await bearerGuard(scope, tokens, { limits, jwt, observer: observed?.guard, tracer: spans?.guardTracer })
        return { 'http:bearer': (_scheme, scopes) => bearer(scopes) }
      }
    })
    metrics?.expectUnavailable(routes.map((route) => route.url), '/readyz', { jwt: jwt !== undefined })
    await app.ready()
  } catch (err) {
    await app.close() // closes the store, too
    throw err
  }
  return app
}
