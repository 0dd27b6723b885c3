import Fastify, { type FastifyInstance } from 'fastify'
import { api } from './api.js'
import type { Config } from './config.js'
import { docs } from './docs.js'
import { errorHandler, notFoundHandler } from './error-handler.js'
import { createHandlers } from './handlers/index.js'
import { health } from './health.js'
import { loadDocument } from './openapi/document.js'
import { createValidatorCompiler, formatValidationErrors } from './openapi/validation.js'
import { openStore } from './store/open.js'

export const BODY_LIMIT = 1024 * 1024

/** Builds the whole service from an explicit config. Never listens: server.ts does, tests inject. */
export interface BuildOptions {
  /** Where logs go; standard output when not given. */
  logStream?: { write: (line: string) => void }
}

export async function buildApp (config: Config, { logStream }: BuildOptions = {}): Promise<FastifyInstance> {
  if (config.apiTokens.length === 0) throw new Error('buildApp needs at least one API token')
  const loaded = loadDocument()
  const app = Fastify({
    logger: { level: config.logLevel, redact: ['req.headers.authorization'], ...(logStream && { stream: logStream }) },
    bodyLimit: BODY_LIMIT,
    schemaErrorFormatter: formatValidationErrors
  })
  app.setValidatorCompiler(createValidatorCompiler())
  app.setErrorHandler(errorHandler)
  app.setNotFoundHandler(notFoundHandler)

  const store = await openStore(config.databaseUrl, {
    pgPoolSize: config.pgPoolSize,
    onIdleError: (err) => app.log.warn({ err }, 'idle database connection failed')
  })
  app.addHook('onClose', async () => await store.close())

  try {
    await app.register(docs, { loaded })
    await app.register(health, { store })
    await app.register(api, { document: loaded.document, handlers: createHandlers({ store }), tokens: config.apiTokens })
    await app.ready()
  } catch (err) {
    await app.close() // closes the store, too
    throw err
  }
  return app
}
