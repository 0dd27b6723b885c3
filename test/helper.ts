import { Ajv2020 } from 'ajv/dist/2020.js'
import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import type { Test } from 'tap'
import { buildApp, type BuildOptions } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import { loadDocument } from '../src/openapi/document.js'
import { openSqliteStore } from '../src/store/sqlite.js'
import type { PlantStore } from '../src/store/store.js'

export const TOKEN = 'test-token-0123456789abcdef'
export const AUTH = { authorization: `Bearer ${TOKEN}` }
export const { document, text: documentText } = loadDocument()

/** A config for a real SQLite file in the test's own temp dir. */
export function testConfig (t: Test, overrides: Partial<Config> = {}): Config {
  const dir = t.testdir()
  return { ...loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` }), ...overrides }
}

/** The app on a fresh SQLite file (or the given config), closed when the test ends. */
export async function buildTestApp (t: Test, config: Config = testConfig(t), options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(config, options)
  t.teardown(() => app.close())
  return app
}

/** Our own store on the same file the app writes, to look at what was really stored. */
export function openStoreOf (t: Test, config: Config): PlantStore {
  const store = openSqliteStore(config.databaseUrl.slice('sqlite:'.length))
  t.teardown(() => store.close())
  return store
}

const ajv = new Ajv2020({ strict: false, formats: { int32: true } })
const validateError = ajv.compile(document.components.schemas.Error)

/** Asserts an answer is the contract's Error, judged by the document's own Error schema. */
export function assertError (t: Test, response: { statusCode: number, json: () => any }, status: number, message?: RegExp): void {
  t.equal(response.statusCode, status, `status ${status}`)
  const body = response.json()
  t.ok(validateError(body), 'body matches the document\'s Error schema', { errors: validateError.errors })
  t.equal(body.error, status, 'error field is the HTTP status')
  if (message !== undefined) t.match(body.message, message)
  t.notMatch(body.message, /\bat .+:\d+:\d+/, 'no stack trace')
}

export function post (app: FastifyInstance, payload: unknown, headers: Record<string, string> = { ...AUTH, 'content-type': 'application/json' }) {
  return app.inject({ method: 'POST', url: '/plants', headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) })
}
