import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.ts'
import { connectionLimits } from '../http/limits.ts'
import { echoRequestId, requestId } from '../http/request-id.ts'
import { documentTarget } from '../openapi/document/base-paths.ts'
import { responseFor } from '../openapi/answers/responses.ts'
import { docs, titleOf } from '../openapi/document/docs.ts'
import type { LoadedDocument, OpenApiDocument } from '../openapi/document/document.ts'
import { modelOf } from '../openapi/document/upgrade.ts'
import { mock, type Mock } from '../openapi/mock/mock.ts'
import { State } from '../openapi/mock/state.ts'
import { engine } from '../openapi/routes/engine.ts'
import { describeInference } from '../openapi/routes/resources.ts'
import type { Refusal, RouteSpec } from '../openapi/routes/routes.ts'
import { apiKeyNames } from '../openapi/requests/security.ts'
import { createValidators } from '../openapi/schemas/validation.ts'
import { AccessLog } from '../ops/access-log.ts'

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
  const validators = createValidators(document, file)
  let built: Pick<Mock, 'checkExamples'> & { remembered: string[] } | undefined
  const { app, routes, refused } = await engine({
    http,
    document,
    validators,
    file,
    logging: { logger: { level: ops.logLevel, ...(logStream && { stream: logStream }) }, logController: new AccessLog(ops.logLevel, new Set(apiKeyNames(document).query)), genReqId: requestId },
    setUp: async (app, served, refused) => {
      for (const { problem } of refused) app.log.warn({ problem }, 'left out: the mock cannot serve this operation')
      const state = stateless ? undefined : new State()
      const { handlers, checkExamples, inference, headersOf } = mock(document, served, validators, () => validators, (problem) => app.log.warn({ problem }, 'not served as the document writes it'), state)
      built = { checkExamples, remembered: describeInference(inference) }
      if (state !== undefined) {
        app.log.info({ resources: built.remembered }, `remembers what clients write to ${inference.resources.length} resource(s)`)
        if (document.paths?.[RESET_PATH] === undefined) {
          app.post(RESET_PATH, async (_request, reply) => {
            state.reset()
            return reply.code(204).send()
          })
        }
      }
      echoRequestId(app)
      declaredHeadersOnErrors(app, headersOf)
      locationUnderBase(app, document)
      await connectionLimits(app, { config: http })
      // Swagger UI and the document, unless the document has paths of its own there.
      const ours = Object.keys(document.paths ?? {}).some((path) => /^\/(docs|openapi\.(json|yaml))(\/|$)/.test(path))
      if (ours) app.log.warn('the document has paths of its own at /docs or /openapi.*: the mock serves no Swagger UI')
      else await app.register(docs, { loaded, title: `${titleOf(document)} (mock)` })
      return handlers
    }
  })
  const { checkExamples, remembered } = built!
  return { app, document, routes, refused, checkExamples, remembered }
}

/**
 * A request the engine refuses for the mock (400, 401, 415…) is answered with the headers its
 * response declares, as the mock's own answers are: this project's Error answers require
 * `Cache-Control`, Ably's `x-ably-serverid`. Only errors pay the route's lookup.
 */
function declaredHeadersOnErrors (app: FastifyInstance, headersOf: Mock['headersOf']): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const route = reply.statusCode < 400 ? undefined : request.routeOptions.config.openapi?.route
    const response = route === undefined ? undefined : responseFor(route.responses, reply.statusCode)
    if (route === undefined || response === undefined) return payload
    for (const [name, value] of Object.entries(headersOf(route, response))) if (!reply.hasHeader(name)) reply.header(name, value)
    return payload
  })
}

/**
 * A Location the mock wrote (a path, or a URL of the host asked) names the item under the base
 * path the client used: a create sent to /v1/pets answers /v1/pets/7, as the engine routes it.
 */
function locationUnderBase (app: FastifyInstance, document: OpenApiDocument): void {
  const toDocument = documentTarget(document)
  if (toDocument === undefined) return
  app.addHook('onSend', async (request, reply, payload) => {
    const { base } = toDocument(request.originalUrl)
    const location = reply.getHeader('location')
    if (base === undefined || typeof location !== 'string') return payload
    const origin = `http://${request.headers.host ?? ''}`
    if (location.startsWith('/')) reply.header('location', `${base}${location}`)
    else if (location.startsWith(`${origin}/`)) reply.header('location', `${origin}${base}${location.slice(origin.length)}`)
    return payload
  })
}
