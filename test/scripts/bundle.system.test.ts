// `npm start` builds, then runs the bundle scripts/bundle.ts links from tsc's dist/: the service
// as operators run it. So it is tested as a process, through what it finds outside itself (the
// SQLite worker and better-sqlite3, Swagger UI's files, openapi.yaml) and the features it loads
// only when configured, each from chunks of its own that a start without them never loads.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { freePort } from '../helpers/ports.ts'
import { builtBundle } from '../helpers/bundle.ts'
import type { NodeCommand } from '../helpers/npm-script.ts'
import { AUDIENCE, startProvider } from '../helpers/identity-provider.ts'
import { startReceiver } from '../helpers/otlp-receiver.ts'
import { freshDatabaseUrl, sql } from '../helpers/postgres.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const RECORDER = fileURLToPath(new URL('../helpers/record-modules.ts', import.meta.url))
const TOKEN = 'bundle-test-token-0123456789abcdef'
let script: NodeCommand

// The libraries of the features a start at the defaults leaves off; esbuild heads each module it
// bundles with a comment naming its file.
const OFF_BY_DEFAULT = ['jose', 'prom-client', '@fastify/cors', '@fastify/rate-limit', 'pg', '@opentelemetry/sdk-trace']

/** The service from the bundle, recording the modules it loads; once in each `dir`. */
function startBundle (t: Test, env: Record<string, string>, dir = t.testdir()) {
  const record = join(dir, 'modules.txt')
  const server = startServer(t, { RECORD_MODULES_TO: record, ...env }, dir, ['--import', RECORDER], script)
  // The bundle's libraries, named in the chunks it loaded; the rest, by their files.
  const libraries = () => {
    const modules = readFileSync(record, 'utf8').split('\n')
    const chunks = modules.filter((url) => url.includes('/dist/bundle/')).map((url) => readFileSync(fileURLToPath(url), 'utf8')).join('\n')
    return (library: string) => chunks.includes(`\n// node_modules/${library}/`) || modules.some((url) => url.includes(`/node_modules/${library}/`))
  }
  return { ...server, libraries }
}

t.before(async () => {
  script = await builtBundle()
})

t.test('the bundle serves the API, its docs and its document, and a 200 is stored', async (t) => {
  const dir = t.testdir()
  const env = { API_TOKENS: TOKEN, DATABASE_URL: 'sqlite:plants.db', LOG_LEVEL: 'info' }
  const server = startBundle(t, env, dir)
  const { url } = await server.listening

  const created = await postPlant(url, TOKEN, '{"id":9007199254740993,"name":"Boston fern","tag":"indoor"}')
  t.equal(created.status, 200)
  t.same(await created.json(), { name: 'Boston fern', tag: 'indoor' })
  const invalid = await postPlant(url, TOKEN, '{"id":2,"name":5}')
  t.equal(invalid.status, 400)
  t.same(await invalid.json(), { error: 400, message: 'body/name must be string' })
  const refused = await postPlant(url, '', '{"id":3,"name":"Fern"}')
  t.equal(refused.status, 401)
  t.match(refused.headers.get('www-authenticate'), /^Bearer/)
  await refused.arrayBuffer()

  const page = await fetch(`${url}/docs`)
  t.equal(page.status, 200)
  t.match(await page.text(), '<title>Plant Store</title>')
  const asset = await fetch(`${url}/docs/static/swagger-ui-bundle.js`)
  t.equal(asset.status, 200, "Swagger UI's files, from beside its code")
  t.equal((await asset.arrayBuffer()).byteLength, readFileSync(join(root, 'node_modules/@fastify/swagger-ui/static/swagger-ui-bundle.js')).length)
  const yaml = await (await fetch(`${url}/openapi.yaml`)).text()
  t.equal(yaml.split('\n')[0], readFileSync(join(root, 'openapi.yaml'), 'utf8').split('\n')[0], 'the document as written')
  t.ok(yaml.includes(`default: ${JSON.stringify(url)}`), "with this instance's base_url")
  const json = await (await fetch(`${url}/openapi.json`)).json() as { paths: Record<string, { post: { operationId: string } }> }
  t.equal(json.paths['/plants'].post.operationId, 'createPlant')

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.match(server.output().stdout, /"url":"\/plants".*"statusCode":200/, 'the access line, flushed at the exit')
  const loaded = server.libraries()
  t.ok(loaded('fastify'), 'the check sees what is loaded')
  for (const library of OFF_BY_DEFAULT) t.notOk(loaded(library), `off: no ${library}`)

  // Stored: a restart on the same file refuses the same id with a different name.
  const again = startServer(t, env, dir, [], script)
  const conflict = await postPlant((await again.listening).url, TOKEN, '{"id":9007199254740993,"name":"Fern"}')
  t.equal(conflict.status, 409)
  await conflict.arrayBuffer()
})

t.test('features loaded only when configured come from the bundle too: PostgreSQL, JWT, metrics, CORS, rate limits, traces', async (t) => {
  const [receiver, provider, metricsPort, databaseUrl] = await Promise.all([startReceiver(t), startProvider(t), freePort(), freshDatabaseUrl()])
  const server = startBundle(t, {
    API_TOKENS: TOKEN,
    DATABASE_URL: databaseUrl,
    JWT_ISSUER: provider.issuer,
    JWT_AUDIENCE: AUDIENCE,
    METRICS_PORT: String(metricsPort),
    CORS_ORIGINS: 'https://app.example.com',
    RATE_LIMIT_PER_MINUTE: '1000',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100'
  })
  const { url } = await server.listening

  const created = await fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await provider.mint()}`, 'content-type': 'application/json', origin: 'https://app.example.com' },
    body: '{"id":1,"name":"Fern"}'
  })
  t.equal(created.status, 200, 'a JWT accepted, the plant stored in PostgreSQL')
  t.equal(created.headers.get('access-control-allow-origin'), 'https://app.example.com')
  t.equal(created.headers.get('ratelimit-limit'), '1000', 'rate limited')
  await created.arrayBuffer()
  t.same(await sql(databaseUrl, 'SELECT id::text, name FROM plants'), [{ id: '1', name: 'Fern' }])
  t.match(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), 'plant_store_creates_total{outcome="created"} 1')
  // pg stays outside the bundle so that OpenTelemetry can instrument it as it loads.
  await receiver.waitFor(() => receiver.spans.some((span) => span.name === 'POST /plants') && receiver.spans.some((span) => span.name.startsWith('pg.query')), "the create's spans, pg's among them")
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  const loaded = server.libraries()
  for (const library of OFF_BY_DEFAULT) t.ok(loaded(library), `on: ${library}`)
})
