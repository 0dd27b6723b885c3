import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { AUDIENCE, startProvider } from '../helpers/identity-provider.ts'
import { startReceiver } from '../helpers/otlp-receiver.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// A feature that is off costs nothing: its modules are not loaded. The service runs as a real
// process, with a hook that records every module it resolves; each feature's libraries appear
// only when it is configured (the second run of each pair shows the check can see them).

const RECORDER = fileURLToPath(new URL('../helpers/record-modules.ts', import.meta.url))
const TOKEN = 'footprint-token-0123456789'

/** The modules a service process with `env` resolved while it started, served one create and stopped. */
async function modulesOf (t: Test, env: Record<string, string>, token = TOKEN): Promise<string[]> {
  const record = join(t.testdir(), 'modules.txt')
  const server = startServer(t, { API_TOKENS: TOKEN, RECORD_MODULES_TO: record, ...env }, undefined, ['--import', RECORDER])
  const { url } = await server.listening
  t.equal((await postPlant(url, token, '{"id":1,"name":"Fern"}')).status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  return readFileSync(record, 'utf8').split('\n')
}

const loads = (modules: string[], library: string): boolean => modules.some((url) => url.includes(`/node_modules/${library}/`))

t.test('JWT checks: jose loads only with JWT_ISSUER set', async (t) => {
  t.notOk(loads(await modulesOf(t, {}), 'jose'), 'off: no jose')
  const provider = await startProvider(t)
  const on = await modulesOf(t, { JWT_ISSUER: provider.issuer, JWT_AUDIENCE: AUDIENCE }, await provider.mint())
  t.ok(loads(on, 'jose'), 'on: jose')
})

t.test('metrics: prom-client loads only with METRICS_PORT set', async (t) => {
  t.notOk(loads(await modulesOf(t, {}), 'prom-client'), 'off: no prom-client')
  t.ok(loads(await modulesOf(t, { METRICS_PORT: '0' }), 'prom-client'), 'on: prom-client')
})

t.test('CORS and rate limits: their plugins load only with CORS_ORIGINS or RATE_LIMIT_PER_MINUTE set', async (t) => {
  const off = await modulesOf(t, {})
  t.notOk(loads(off, '@fastify/cors') || loads(off, '@fastify/rate-limit'), 'off: neither')
  const on = await modulesOf(t, { CORS_ORIGINS: 'https://app.example', RATE_LIMIT_PER_MINUTE: '1000' })
  t.ok(loads(on, '@fastify/cors') && loads(on, '@fastify/rate-limit'), 'on: both')
})

t.test('tracing: no OpenTelemetry module without an OTLP endpoint or exporter', async (t) => {
  const off = await modulesOf(t, {})
  t.notOk(off.some((url) => url.includes('/node_modules/@opentelemetry/')), 'off: none')
  const receiver = await startReceiver(t)
  const on = await modulesOf(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
  t.ok(loads(on, '@opentelemetry/sdk-trace'), 'on: the trace SDK')
  t.notOk(loads(on, '@opentelemetry/exporter-trace-otlp-http'), 'of the OTLP exporters, only the protocol\'s (protobuf, by default)')
  t.notOk(loads(on, '@opentelemetry/instrumentation-pg') || loads(on, '@opentelemetry/context-async-hooks'), 'on SQLite: not the pg instrumentation, nor the context manager it needs')
})
