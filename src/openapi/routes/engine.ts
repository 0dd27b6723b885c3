import type { IncomingMessage } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { HttpConfig } from '../../http/config.ts'
import { errorHandler, notFoundHandler, plainError } from '../../http/error-handler.ts'
import { limitOptions } from '../../http/limits.ts'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import { lazySerializerCompiler } from '../answers/serialization.ts'
import { documentTarget } from '../document/base-paths.ts'
import { DocumentError } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { credentialChecks } from '../mock/credentials.ts'
import { securityHooks } from '../requests/security.ts'
import type { Validators } from '../schemas/validation.ts'
import { api } from './api.ts'
import { routeList, type Refusal, type RouteSpec } from './routes.ts'

// The engine for a document nobody wrote handlers for: its operations as the service serves its
// own (routes, parsing, validation, security), with credentials checked for presence and form
// only (mock/credentials.ts). The mock (cli/mock-app.ts) answers from it; the proxy's judge
// (proxy/judge.ts) asks it whether a request is one the document allows. One place decides.

type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

export interface Engine {
  app: FastifyInstance
  /** The operations served, and those left out, with why. */
  routes: RouteSpec[]
  refused: Refusal[]
  /** How errors outside every operation are written: in the shape the document's errors share. */
  errorWriter: () => ErrorWriter
}

export interface EngineOptions {
  http: HttpConfig
  /** The document, read as 3.1 (document/upgrade.ts). */
  document: OpenApiDocument
  validators: Validators
  /** How messages name the document. */
  file: string
  /** Fastify's logging options: none, unless given. */
  logging?: Pick<FastifyServerOptions, 'logger' | 'logController' | 'genReqId'>
  /** The handlers of the operations served, and what the app needs before the API (its hooks, its other routes). */
  setUp: (app: FastifyInstance, routes: RouteSpec[], refused: Refusal[]) => Promise<object>
}

/** The document's operations on the engine, each bound to the handler `setUp` gives it; ready. */
export async function engine ({ http, document, validators, file, logging = { logger: false }, setUp }: EngineOptions): Promise<Engine> {
  const { routes, refused } = routeList(document)
  // An operation whose security no check can take is left out too.
  const served = routes.filter((route) => {
    try {
      securityHooks(route, document, credentialChecks, file)
      return true
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err
      refused.push({ operation: `${route.method} ${route.path}`, pointer: route.pointer, problem: err.message })
      return false
    }
  })
  // Errors outside every operation take the shape the document's errors share, once the API knows it.
  let errorWriter: ErrorWriter = plainError
  // A request under a server's base path (/v1/pets/1) is routed as the document's path (/pets/1).
  const toDocument = documentTarget(document)
  const app = Fastify({
    ...logging,
    ...(toDocument !== undefined && { rewriteUrl: (request: IncomingMessage) => toDocument(request.url ?? '/').target }),
    ...limitOptions(http, () => errorWriter),
    schemaController: { compilersFactory: { buildValidator: () => ({ schema }: { schema: object }) => validators.request(schema), buildSerializer: () => lazySerializerCompiler } as unknown as SchemaCompilers }
  })
  const handleError = errorHandler(() => errorWriter)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFoundHandler(handleError))
  const handlers = await setUp(app, served, refused)
  await app.register(api, {
    http,
    document,
    routes: served,
    file,
    handlers,
    validators,
    checks: async () => credentialChecks,
    onErrorWriter: (writer) => { errorWriter = writer }
  })
  await app.ready()
  return { app, routes: served, refused, errorWriter: () => errorWriter }
}
