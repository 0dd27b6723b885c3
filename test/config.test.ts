import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, DEFAULT_DATABASE_URL, loadConfig } from '../src/config.js'

const TOKEN = 'a-valid-token-0123456789'

t.test('defaults', async (t) => {
  t.same(loadConfig({}), {
    port: 3000,
    host: '127.0.0.1',
    databaseUrl: DEFAULT_DATABASE_URL,
    pgPoolSize: 10,
    storeTimeout: 10000,
    maxPendingCreates: 1024,
    bodyLimit: 1048576,
    maxHeaderBytes: 16384,
    requestTimeout: 30000,
    keepAliveTimeout: 72000,
    maxConnections: 1024,
    maxEventLoopDelay: 1000,
    shutdownTimeout: 10000,
    apiTokens: [],
    generatedTokenFile: 'data/api-token',
    logLevel: 'info',
    metricsPort: undefined,
    metricsHost: '127.0.0.1',
    trustProxy: false,
    corsOrigins: [],
    rateLimit: undefined
  })
})

t.test('reads every variable', async (t) => {
  t.match(loadConfig({ PORT: '8080', HOST: '0.0.0.0', DATABASE_URL: 'sqlite:/tmp/x.db', API_TOKENS: `${TOKEN},${TOKEN}-2`, LOG_LEVEL: 'debug' }), {
    port: 8080, host: '0.0.0.0', databaseUrl: 'sqlite:/tmp/x.db', pgPoolSize: 10, apiTokens: [TOKEN, `${TOKEN}-2`], logLevel: 'debug'
  })
  t.match(loadConfig({ BODY_LIMIT_BYTES: '2048', MAX_HEADER_BYTES: '4096', REQUEST_TIMEOUT_MS: '500', KEEP_ALIVE_TIMEOUT_MS: '300', MAX_CONNECTIONS: '2', MAX_EVENT_LOOP_DELAY_MS: '0' }), {
    bodyLimit: 2048, maxHeaderBytes: 4096, requestTimeout: 500, keepAliveTimeout: 300, maxConnections: 2, maxEventLoopDelay: 0
  })
  t.match(loadConfig({ STORE_TIMEOUT_MS: '2500', MAX_PENDING_CREATES: '64' }), { storeTimeout: 2500, maxPendingCreates: 64 })
  t.throws(() => loadConfig({ STORE_TIMEOUT_MS: '0' }), /STORE_TIMEOUT_MS must be an integer from 100 to 600000, got "0"/)
  t.throws(() => loadConfig({ MAX_PENDING_CREATES: 'none' }), /MAX_PENDING_CREATES must be an integer from 1 to 1000000/)
  t.match(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }), { metricsPort: 9464, metricsHost: '0.0.0.0' })
  t.equal(loadConfig({ METRICS_PORT: '0' }).metricsPort, 0, 'a free port')
  t.throws(() => loadConfig({ METRICS_PORT: 'on' }), /METRICS_PORT must be an integer from 0 to 65535, got "on"/)
  t.throws(() => loadConfig({ METRICS_HOST: '' }), /METRICS_HOST must not be empty/)
  t.same(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://127.0.0.1:5173' }).corsOrigins, ['https://app.example.com', 'http://127.0.0.1:5173'])
  t.same(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://x', 'https://*.example.com']) {
    t.throws(() => loadConfig({ CORS_ORIGINS: bad }), /CORS_ORIGINS must list origins/, bad)
  }
  t.same(loadConfig({ RATE_LIMIT_PER_MINUTE: '600' }).rateLimit, { max: 600, windowMs: 60_000 }, 'a limit per minute')
  for (const bad of ['0', '-1', '1.5', 'many', '']) {
    t.throws(() => loadConfig({ RATE_LIMIT_PER_MINUTE: bad }), /RATE_LIMIT_PER_MINUTE must be an integer from 1 to 1000000/, JSON.stringify(bad))
  }
  t.throws(() => loadConfig({ MAX_CONNECTIONS: '0' }), /MAX_CONNECTIONS must be an integer from 1 to 1000000, got "0"/)
  t.throws(() => loadConfig({ BODY_LIMIT_BYTES: 'lots' }), /BODY_LIMIT_BYTES must be an integer/)
  t.equal(loadConfig({ DATABASE_URL: 'sqlite:/srv/plants/store.db' }).generatedTokenFile, '/srv/plants/api-token', 'the kept token lives beside the SQLite file')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/plants' }).generatedTokenFile, 'data/api-token')
  for (const url of ['postgres://u:p@db:5432/plants', 'postgresql://db/plants']) {
    t.equal(loadConfig({ DATABASE_URL: url, PG_POOL_SIZE: '25' }).databaseUrl, url)
    t.equal(loadConfig({ DATABASE_URL: url, PG_POOL_SIZE: '25' }).pgPoolSize, 25)
  }
})

t.test('reads tokens from a file, one per line', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, `# rotated monthly\n${TOKEN}\n\n${TOKEN}-2\n`, { mode: 0o600 })
  t.same(loadConfig({ API_TOKENS_FILE: file }).apiTokens, [TOKEN, `${TOKEN}-2`])
})

t.test('a token file that other users can read is refused, as the kept token is', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, `${TOKEN}\n`)
  for (const mode of [0o644, 0o640, 0o604]) {
    chmodSync(file, mode)
    const err = t.throws(() => loadConfig({ API_TOKENS_FILE: file })) as Error
    t.match(err.message, `API_TOKENS_FILE cannot be read: ${file} is open to other users (mode ${mode.toString(8)}); run chmod 600 on it`)
    t.notMatch(err.message, TOKEN, 'the token is not in the message')
  }
  chmodSync(file, 0o400)
  t.same(loadConfig({ API_TOKENS_FILE: file }).apiTokens, [TOKEN], 'read-only for its owner is fine')
})

t.test('lists every problem at once, clearly', async (t) => {
  const err = t.throws(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', API_TOKENS: 'short' })) as Error
  t.type(err, ConfigError)
  t.match(err.message, /PORT must be an integer from 0 to 65535, got "eighty"/)
  t.match(err.message, /DATABASE_URL must look like sqlite:<path> or postgres:\/\/user:password@host:port\/database, got "mysql:\/\/x"/)
  t.match(err.message, /LOG_LEVEL must be one of/)
  t.match(err.message, /token #1 is shorter than 16 characters/)
})

t.test('refuses unusable tokens', async (t) => {
  t.throws(() => loadConfig({ API_TOKENS: `${TOKEN}, ${TOKEN}` }), /token #2 has characters other than/)
  t.throws(() => loadConfig({ API_TOKENS: `${TOKEN}\u0000abc` }), /token #1 has characters other than/)
  t.throws(() => loadConfig({ API_TOKENS: `${TOKEN},` }), /token #2 is shorter/)
  t.throws(() => loadConfig({ API_TOKENS: TOKEN, API_TOKENS_FILE: '/x' }), /either API_TOKENS or API_TOKENS_FILE/)
  t.throws(() => loadConfig({ API_TOKENS_FILE: join(t.testdir(), 'missing') }), /API_TOKENS_FILE cannot be read/)
  const empty = join(t.testdir(), 'empty')
  writeFileSync(empty, '# nothing yet\n', { mode: 0o600 })
  t.throws(() => loadConfig({ API_TOKENS_FILE: empty }), /API_TOKENS_FILE holds no token/)
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT/)
  t.throws(() => loadConfig({ HOST: ' ' }), /HOST must not be empty/)
  t.throws(() => loadConfig({ DATABASE_URL: 'sqlite:' }), /DATABASE_URL/)
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://' }), /DATABASE_URL/)
  t.throws(() => loadConfig({ PG_POOL_SIZE: '0' }), /PG_POOL_SIZE must be an integer from 1 to 1000/)
  const secret = t.throws(() => loadConfig({ DATABASE_URL: 'mysql://admin:hunter2@db/x' })) as Error
  t.notMatch(secret.message, /hunter2/, 'a password never appears in the message')
})

t.test('OpenTelemetry: on with an OTLP endpoint or a traces exporter, checked as the SDK would only warn', async (t) => {
  t.equal(loadConfig({}).tracing, undefined, 'off by default')
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
  t.same(loadConfig(endpoint).tracing, { exporter: 'otlp', protocol: 'http/protobuf', serviceName: 'plant-store', sampler: { name: 'parentbased_always_on', ratio: 1 } }, 'the defaults')
  t.same(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing?.protocol, 'http/json')
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing?.exporter, 'console', 'an exporter alone turns it on')
  t.equal(loadConfig({ ...endpoint, OTEL_SERVICE_NAME: 'plants-eu' }).tracing?.serviceName, undefined, 'OTEL_SERVICE_NAME names the service (the SDK reads it)')
  t.equal(loadConfig({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=plants-eu' }).tracing?.serviceName, undefined, 'so does service.name in OTEL_RESOURCE_ATTRIBUTES')
  t.equal(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing, undefined, 'none turns it off')
  t.equal(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing, undefined, 'so does OTEL_SDK_DISABLED')
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing, undefined, 'an empty variable is an unset one')
  t.same(loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing?.sampler, { name: 'parentbased_traceidratio', ratio: 0.25 })
  const err = t.throws(() => loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'jaeger', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'parentbased_traceidration', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })) as Error
  t.match(err.message, /OTEL_TRACES_EXPORTER must be otlp, console or none, got "jaeger"/)
  t.match(err.message, /must be http\/protobuf or http\/json \(OTLP over HTTP\), got "grpc"/)
  t.match(err.message, /OTEL_TRACES_SAMPLER must be one of .*, got "parentbased_traceidration"/)
  t.match(err.message, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL/)
  t.throws(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }), /OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "1.5"/)
})
