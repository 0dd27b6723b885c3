import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { errorHandler, notFoundHandler, plainError } from '../../src/http/error-handler.ts'
import { api } from '../../src/openapi/routes/api.ts'
import { credentialChecks } from '../../src/openapi/mock/credentials.ts'
import type { OpenApiDocument } from '../../src/openapi/document/document.ts'
import type { ErrorWriter } from '../../src/openapi/answers/error-shapes.ts'
import { routesFromDocument } from '../../src/openapi/routes/routes.ts'
import type { Checks } from '../../src/openapi/requests/security.ts'
import { lazySerializerCompiler } from '../../src/openapi/answers/serialization.ts'
import { modelOf } from '../../src/openapi/document/upgrade.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'

// The engine (src/openapi/) on a document of a test's own, with handlers of its own: the API
// scope the service and the mock register, with nothing of the Plant Store's around it. Handlers
// that echo what they are given show what the engine made of a request.

export interface EngineOptions {
  /** The checks of security schemes; the mock's (presence and form) by default. */
  checks?: Checks
  /** Variables of the HTTP configuration (VALIDATE_RESPONSES, BODY_LIMIT_BYTES…). */
  env?: Record<string, string>
  /** Where log lines go; none by default. */
  logStream?: { write: (line: string) => void }
}

/** An echo handler: what the engine gives it, as the answer's body. */
export const echo = async (input: Record<string, unknown>) => ({ status: 200, body: JSON.stringify(input, (_key, value) => typeof value === 'bigint' ? `${value}n` : value?.type === 'Buffer' && Array.isArray(value.data) ? `<${value.data.length} bytes>` : value), contentType: 'application/json' })

export async function engineApp (t: Test, document: OpenApiDocument, handlers: Record<string, unknown>, { checks = credentialChecks, env = {}, logStream }: EngineOptions = {}): Promise<FastifyInstance> {
  const { http } = loadConfig({ VALIDATE_RESPONSES: 'true', ...env })
  const model = await modelOf(document)
  const routes = routesFromDocument(model, 'test.yaml')
  const validators = createValidators(model, 'test.yaml')
  const app = Fastify({ logger: logStream === undefined ? false : { level: 'info', stream: logStream } })
  app.setSerializerCompiler(lazySerializerCompiler)
  let errorWriter: ErrorWriter = plainError
  const handle = errorHandler(() => errorWriter)
  app.setErrorHandler(handle)
  app.setNotFoundHandler(notFoundHandler(handle))
  await app.register(api, { http, document: model, routes, file: 'test.yaml', handlers, validators, checks: async () => checks, onErrorWriter: (writer) => { errorWriter = writer } })
  await app.ready()
  t.teardown(() => app.close())
  return app
}
