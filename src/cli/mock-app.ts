import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Config } from '../config.ts'
import { errorHandler, notFoundHandler, plainError } from '../http/error-handler.ts'
import { connectionLimits, limitOptions } from '../http/limits.ts'
import { echoRequestId, requestId } from '../http/request-id.ts'
import { api } from '../openapi/routes/api.ts'
import { credentialChecks } from '../openapi/mock/credentials.ts'
import { DocumentError } from '../openapi/document/document-error.ts'
import { docs, titleOf } from '../openapi/document/docs.ts'
import type { LoadedDocument, OpenApiDocument } from '../openapi/document/document.ts'
import type { ErrorWriter } from '../openapi/answers/error-shapes.ts'
import { mock, type Mock } from '../openapi/mock/mock.ts'
import { describeInference } from '../openapi/routes/resources.ts'
import { State } from '../openapi/mock/state.ts'
import { routeList, type Refusal, type RouteSpec } from '../openapi/routes/routes.ts'
import { securityHooks } from '../openapi/requests/security.ts'
import { lazySerializerCompiler } from '../openapi/answers/serialization.ts'
import { modelOf } from '../openapi/document/upgrade.ts'
import { createValidators } from '../openapi/schemas/validation.ts'
import { AccessLog } from '../ops/access-log.ts'

type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

export interface MockApp {
  app: FastifyInstance
  /** The document as the mock reads it (3.1), and the operations it serves. */
  document: OpenApiDocument
  routes: RouteSpec[]
  /** The operations left out, with why. */
  refused: Refusal[]
  checkExamples: Mock['checkExamples']
  /** What the mock remembers, a line each (none when stateless), as printed at start. */
  remembered: string[]
}

export interface MockOptions {
  /** Answers every request on its own, as from the document alone: nothing is remembered. */
  stateless?: boolean
}

/** Where a client forgets everything the mock remembers, without a restart (unless the document has that path). */
export const RESET_PATH = '/__mock/reset'

/**
 * A mock of the document (openapi/mock/mock.ts) behind the service's engine: its routes, parsing,
 * validation and security, with the mock's checks of presence and form. `file` names the
 * document in messages. Never listens: the command (mock.ts) does, tests inject.
 */
export async function buildMock ({ http: config, ops }: Pick<Config, 'http' | 'ops'>, loaded: LoadedDocument, file: string, logStream?: { write: (line: string) => void }, { stateless = false }: MockOptions = {}): Promise<MockApp> {
  // No shedding on event-loop lag: the mock compiles an operation's validators and samples when
  // first asked, which may hold the loop past the service's bound, and a 503 is no answer the
  // document declares.
  const http = { ...config, maxEventLoopDelay: 0 }
  // Served as upgraded: a copy of a big document would be most of the mock's memory.
  const document = await modelOf(loaded.document, { inPlace: true })
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
  const validators = createValidators(document, file)
  const app = Fastify({
    logger: { level: ops.logLevel, ...(logStream && { stream: logStream }) },
    logController: new AccessLog(ops.logLevel),
    genReqId: requestId,
    ...limitOptions(http),
    schemaController: { compilersFactory: { buildValidator: () => ({ schema }: { schema: object }) => validators.request(schema), buildSerializer: () => lazySerializerCompiler } as unknown as SchemaCompilers }
  })
  let errorWriter: ErrorWriter = plainError
  const handleError = errorHandler(() => errorWriter)
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFoundHandler(handleError))
  for (const { problem } of refused) app.log.warn({ problem }, 'left out: the mock cannot serve this operation')
  const state = stateless ? undefined : new State()
  const { handlers, checkExamples, inference } = mock(document, served, validators, () => validators, (problem) => app.log.warn({ problem }, 'not served as the document writes it'), state)
  const remembered = describeInference(inference)
  if (state !== undefined) {
    app.log.info({ resources: remembered }, `remembers what clients write to ${inference.resources.length} resource(s)`)
    if (document.paths?.[RESET_PATH] === undefined) {
      app.post(RESET_PATH, async (_request, reply) => {
        state.reset()
        return reply.code(204).send()
      })
    }
  }
  echoRequestId(app)
  await connectionLimits(app, { config: http })
  // Swagger UI and the document, unless the document has paths of its own there.
  const ours = Object.keys(document.paths ?? {}).some((path) => /^\/(docs|openapi\.(json|yaml))(\/|$)/.test(path))
  if (ours) app.log.warn('the document has paths of its own at /docs or /openapi.*: the mock serves no Swagger UI')
  else await app.register(docs, { loaded, title: `${titleOf(document)} (mock)` })
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
  return { app, document, routes: served, refused, checkExamples, remembered }
}
