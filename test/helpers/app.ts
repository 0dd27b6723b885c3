import { Ajv2020 } from 'ajv/dist/2020.js'
import Database from 'better-sqlite3'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { join } from 'node:path'
import type { Test } from 'tap'
import { buildApp, type BuildOptions } from '../../src/app.ts'
import { loadConfig, type Config } from '../../src/config.ts'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { openStore } from '../../src/store/open.ts'
import type { PlantStore } from '../../src/store/store.ts'
import { freshDatabaseUrl } from './postgres.ts'

export const TOKEN = 'test-token-0123456789abcdef'
export const AUTH = { authorization: `Bearer ${TOKEN}` }
export const { document, text: documentText } = await loadDocument()

/** A concrete URL for a path of the document: each {parameter} filled with 1. */
export const exampleUrl = (path: string): string => path.replace(/\{[^}]+\}/g, '1')

/** The suites run on SQLite unless TEST_BACKEND=postgres (see the *.postgres.test.ts files beside each suite). */
export const BACKEND = process.env.TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'

/** A fresh, empty database of the given backend: a SQLite file in the test's temp dir, or a new PostgreSQL database. */
export async function freshDatabase (t: Test, backend: 'sqlite' | 'postgres' = BACKEND): Promise<string> {
  return backend === 'postgres' ? await freshDatabaseUrl() : `sqlite:${join(t.testdir(), 'plants.db')}`
}

/** What a test sets past what the environment can say (a rate limit's window shorter than a minute), section by section. */
export type ConfigOverrides = { [K in keyof Config]?: Partial<Config[K]> }

/**
 * A config for a fresh database of the suite's backend: `env` read as the service reads it, then
 * `overrides`. Every answer is checked against the document, as in development: one that breaks it fails the test.
 */
export async function testConfig (t: Test, env: Record<string, string> = {}, overrides: ConfigOverrides = {}): Promise<Config> {
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: await freshDatabase(t), VALIDATE_RESPONSES: 'true', ...env })
  return { http: { ...config.http, ...overrides.http }, store: { ...config.store, ...overrides.store }, security: { ...config.security, ...overrides.security }, ops: { ...config.ops, ...overrides.ops } }
}

/** The app on a fresh database (or the given config), closed when the test ends. */
export async function buildTestApp (t: Test, config?: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(config ?? await testConfig(t), options)
  t.teardown(() => app.close())
  return app
}

/** A log stream for buildApp that keeps every line: as written (`raw`), and parsed (`lines`). */
export function captureLog (): { logStream: { write: (line: string) => void }, raw: string[], lines: Array<Record<string, any>> } {
  const raw: string[] = []
  const lines: Array<Record<string, any>> = []
  return { raw, lines, logStream: { write: (line) => { raw.push(line); lines.push(JSON.parse(line)) } } }
}

/** Our own store on the same database the app writes, to look at what was really stored. */
export async function openStoreOf (t: Test, databaseUrl: string): Promise<PlantStore> {
  const store = await openStore(databaseUrl, { pgPoolSize: 2 })
  t.teardown(() => store.close())
  return store
}

/** Breaks the database under a running app, through the raw driver: its table is gone. */
export async function dropPlantsTable (databaseUrl: string): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length))
    db.exec('DROP TABLE plants')
    db.close()
    return
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query('DROP TABLE plants')
  await client.end()
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
