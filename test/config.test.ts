import { spawnSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ConfigError, loadConfig } from '../src/config.ts'

const TOKEN = 'a-valid-token-0123456789'

t.test('defaults, each layer its own section', async (t) => {
  t.same(loadConfig({}), {
    http: {
      port: 3000,
      host: '127.0.0.1',
      bodyLimit: 1048576,
      partLimit: 1048576,
      maxParts: 1000,
      maxHeaderBytes: 16384,
      requestTimeout: 30000,
      keepAliveTimeout: 72000,
      maxConnections: 1024,
      maxEventLoopDelay: 1000,
      shutdownTimeout: 10000,
      validateResponses: false,
      corsOrigins: [],
      trustProxy: false
    },
    store: {
      databaseUrl: 'sqlite:./data/plants.db',
      migrateDatabaseUrl: 'sqlite:./data/plants.db',
      pgPoolSize: 10,
      timeoutMs: 10000,
      maxPending: 1024,
      dataDir: './data'
    },
    security: { apiTokens: [], rateLimit: undefined, jwt: undefined },
    ops: { logLevel: 'info', metricsPort: undefined, metricsHost: '127.0.0.1', tracing: undefined }
  })
})

t.test('reads every variable', async (t) => {
  t.match(loadConfig({ PORT: '8080', HOST: '0.0.0.0', DATABASE_URL: 'sqlite:/tmp/x.db', API_TOKENS: `${TOKEN},${TOKEN}-2`, LOG_LEVEL: 'debug', SHUTDOWN_TIMEOUT_MS: '500' }), {
    http: { port: 8080, host: '0.0.0.0', shutdownTimeout: 500 }, store: { databaseUrl: 'sqlite:/tmp/x.db', pgPoolSize: 10 }, security: { apiTokens: [TOKEN, `${TOKEN}-2`] }, ops: { logLevel: 'debug' }
  })
  t.match(loadConfig({ BODY_LIMIT_BYTES: '2048', MAX_HEADER_BYTES: '4096', REQUEST_TIMEOUT_MS: '500', KEEP_ALIVE_TIMEOUT_MS: '300', MAX_CONNECTIONS: '2', MAX_EVENT_LOOP_DELAY_MS: '0' }).http, {
    bodyLimit: 2048, maxHeaderBytes: 4096, requestTimeout: 500, keepAliveTimeout: 300, maxConnections: 2, maxEventLoopDelay: 0
  })
  t.match(loadConfig({ STORE_TIMEOUT_MS: '2500', MAX_PENDING_CREATES: '64' }).store, { timeoutMs: 2500, maxPending: 64 })
  t.throws(() => loadConfig({ STORE_TIMEOUT_MS: '0' }), /STORE_TIMEOUT_MS must be an integer from 100 to 600000, got "0"/)
  t.throws(() => loadConfig({ MAX_PENDING_CREATES: 'none' }), /MAX_PENDING_CREATES must be an integer from 1 to 1000000/)
  t.match(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).ops, { metricsPort: 9464, metricsHost: '0.0.0.0' })
  t.equal(loadConfig({ METRICS_PORT: '0' }).ops.metricsPort, 0, 'a free port')
  t.throws(() => loadConfig({ METRICS_PORT: 'on' }), /METRICS_PORT must be an integer from 0 to 65535, got "on"/)
  t.throws(() => loadConfig({ METRICS_HOST: '' }), /METRICS_HOST must not be empty/)
  t.same(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://127.0.0.1:5173' }).http.corsOrigins, ['https://app.example.com', 'http://127.0.0.1:5173'])
  t.same(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins, ['*'])
  for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://x', 'https://*.example.com']) {
    t.throws(() => loadConfig({ CORS_ORIGINS: bad }), /CORS_ORIGINS must list origins/, bad)
  }
  t.same(loadConfig({ RATE_LIMIT_PER_MINUTE: '600' }).security.rateLimit, { max: 600, windowMs: 60_000 }, 'a limit per minute')
  for (const bad of ['0', '-1', '1.5', 'many', '']) {
    t.throws(() => loadConfig({ RATE_LIMIT_PER_MINUTE: bad }), /RATE_LIMIT_PER_MINUTE must be an integer from 1 to 1000000/, JSON.stringify(bad))
  }
  t.throws(() => loadConfig({ MAX_CONNECTIONS: '0' }), /MAX_CONNECTIONS must be an integer from 1 to 1000000, got "0"/)
  t.throws(() => loadConfig({ BODY_LIMIT_BYTES: 'lots' }), /BODY_LIMIT_BYTES must be an integer/)
  t.equal(loadConfig({ DATABASE_URL: 'sqlite:/srv/plants/store.db' }).store.dataDir, '/srv/plants', 'the kept token lives beside the SQLite file')
  t.equal(loadConfig({ DATABASE_URL: 'postgres://db/plants' }).store.dataDir, './data')
  for (const url of ['postgres://u:p@db:5432/plants', 'postgresql://db/plants']) {
    t.match(loadConfig({ DATABASE_URL: url, PG_POOL_SIZE: '25' }).store, { databaseUrl: url, migrateDatabaseUrl: url, pgPoolSize: 25 })
  }
})

t.test('reads tokens from a file, one per line', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, `# rotated monthly\n${TOKEN}\n\n${TOKEN}-2\n`, { mode: 0o600 })
  t.same(loadConfig({ API_TOKENS_FILE: file }).security.apiTokens, [TOKEN, `${TOKEN}-2`])
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
  t.same(loadConfig({ API_TOKENS_FILE: file }).security.apiTokens, [TOKEN], 'read-only for its owner is fine')
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
  const inQuery = t.throws(() => loadConfig({ DATABASE_URL: 'mysql://db/x?sslmode=require&password=hunter2' })) as Error
  t.match(inQuery.message, 'got "mysql://db/x?…"', 'nor one in the query')
})

t.test('OpenTelemetry: on with an OTLP endpoint or a traces exporter, checked as the SDK would only warn', async (t) => {
  t.equal(loadConfig({}).ops.tracing, undefined, 'off by default')
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
  t.same(loadConfig(endpoint).ops.tracing, { exporter: 'otlp', protocol: 'http/protobuf', serviceName: 'plant-store', sampler: { name: 'parentbased_always_on', ratio: 1 } }, 'the defaults')
  t.same(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).ops.tracing?.protocol, 'http/json')
  t.same(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).ops.tracing?.exporter, 'console', 'an exporter alone turns it on')
  t.equal(loadConfig({ ...endpoint, OTEL_SERVICE_NAME: 'plants-eu' }).ops.tracing?.serviceName, undefined, 'OTEL_SERVICE_NAME names the service (the SDK reads it)')
  t.equal(loadConfig({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=plants-eu' }).ops.tracing?.serviceName, undefined, 'so does service.name in OTEL_RESOURCE_ATTRIBUTES')
  t.equal(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).ops.tracing, undefined, 'none turns it off')
  t.equal(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).ops.tracing, undefined, 'so does OTEL_SDK_DISABLED')
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).ops.tracing, undefined, 'an empty variable is an unset one')
  t.same(loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).ops.tracing?.sampler, { name: 'parentbased_traceidratio', ratio: 0.25 })
  const err = t.throws(() => loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'jaeger', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'parentbased_traceidration', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })) as Error
  t.match(err.message, /OTEL_TRACES_EXPORTER must be otlp, console or none, got "jaeger"/)
  t.match(err.message, /must be http\/protobuf or http\/json \(OTLP over HTTP\), got "grpc"/)
  t.match(err.message, /OTEL_TRACES_SAMPLER must be one of .*, got "parentbased_traceidration"/)
  t.match(err.message, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL/)
  t.throws(() => loadConfig({ ...endpoint, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }), /OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "1.5"/)
})

t.test('a variable that looks like a typo of a declared one is named, with the name it probably meant', async (t) => {
  const err = t.throws(() => loadConfig({ DATABSE_URL: 'sqlite:/tmp/x.db', STORE_TIMEOUT: '5000', port: '8080', API_TOKEN: TOKEN, PROT: '1', DATABASE_URL_FIEL: '/x' })) as Error
  t.match(err.message, 'DATABSE_URL is set, but no such variable is read: did you mean DATABASE_URL?')
  t.match(err.message, 'STORE_TIMEOUT is set, but no such variable is read: did you mean STORE_TIMEOUT_MS?', 'a name without its unit')
  t.match(err.message, 'port is set, but no such variable is read: did you mean PORT?', 'another case')
  t.match(err.message, 'did you mean API_TOKENS?')
  t.match(err.message, 'PROT is set, but no such variable is read: did you mean PORT?', 'two letters swapped')
  t.match(err.message, 'did you mean DATABASE_URL_FILE?', 'the file variables are names too')
  t.notMatch(err.message, TOKEN, 'never the value')
  // What a shell, npm, Node, a container or Kubernetes sets is no typo.
  const everyday = { PATH: '/usr/bin', HOME: '/root', HOSTNAME: 'pod-1', PWD: '/app', TERM: 'xterm', LANG: 'C.UTF-8', NODE_ENV: 'production', NODE_OPTIONS: '', PGPORT: '5432', PGHOST: 'db', KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_PORT: 'tcp://10.0.0.1:443', PLANT_STORE_PORT: 'tcp://10.0.0.2:3000', OTEL_EXPORTER_OTLP_HEADERS: 'a=b', OTEL_BSP_SCHEDULE_DELAY: '500', npm_config_cache: '/tmp', TZ: 'UTC', USER: 'node', SHLVL: '1' }
  t.doesNotThrow(() => loadConfig(everyday))
})

t.test('every secret is read from <NAME>_FILE too: one or the other, a file only its owner reads, less a trailing newline', async (t) => {
  const dir = t.testdir()
  const secret = (name: string, text: string, mode = 0o600): string => {
    writeFileSync(join(dir, name), text, { mode })
    chmodSync(join(dir, name), mode)
    return join(dir, name)
  }
  const url = 'postgres://app:hunter2@db:5432/plants'
  t.equal(loadConfig({ DATABASE_URL_FILE: secret('db', `${url}\n`) }).store.databaseUrl, url, 'DATABASE_URL, its newline dropped')
  t.equal(loadConfig({ DATABASE_URL_FILE: secret('db-crlf', `${url}\r\n`) }).store.databaseUrl, url, 'a CRLF too')
  t.equal(loadConfig({ MIGRATE_DATABASE_URL_FILE: secret('owner', 'postgres://owner:s3cret@db/plants\n') }).store.migrateDatabaseUrl, 'postgres://owner:s3cret@db/plants', 'MIGRATE_DATABASE_URL')
  t.same(loadConfig({ API_TOKENS_FILE: secret('tokens', `${TOKEN}\n`) }).security.apiTokens, [TOKEN], 'API_TOKENS')

  const both = t.throws(() => loadConfig({ DATABASE_URL: url, DATABASE_URL_FILE: secret('db', url) })) as Error
  t.match(both.message, 'set either DATABASE_URL or DATABASE_URL_FILE, not both')
  const open = t.throws(() => loadConfig({ MIGRATE_DATABASE_URL_FILE: secret('open', url, 0o644) })) as Error
  t.match(open.message, `MIGRATE_DATABASE_URL_FILE cannot be read: ${join(dir, 'open')} is open to other users (mode 644); run chmod 600 on it`)
  const bad = t.throws(() => loadConfig({ DATABASE_URL_FILE: secret('bad', 'mysql://root:hunter2@db/x\n') })) as Error
  t.match(bad.message, 'DATABASE_URL must look like')
  for (const err of [both, open, bad]) t.notMatch(err.message, 'hunter2', 'no password in a message')
})

t.test('npm run config: the configuration in force, each value with its source, secrets redacted', async (t) => {
  const dir = t.testdir()
  writeFileSync(join(dir, 'db'), 'postgres://app:hunter2@db.internal:5432/plants?sslmode=require&sslpassword=pw\n', { mode: 0o600 })
  const env = { DATABASE_URL_FILE: join(dir, 'db'), API_TOKENS: `${TOKEN},${TOKEN}-2`, PORT: '8080', PATH: process.env.PATH }
  const run = spawnSync(process.execPath, [fileURLToPath(new URL('../src/cli/config.ts', import.meta.url))], { encoding: 'utf8', env })
  t.equal(run.status, 0, run.stderr)
  const lines = run.stdout.split('\n')
  t.ok(lines.includes(`DATABASE_URL=postgres://app:***@db.internal:5432/plants?…   # from DATABASE_URL_FILE (${join(dir, 'db')})`), 'a URL keeps its user, host and database, never its password or query')
  t.ok(lines.includes(`API_TOKENS=(secret, ${env.API_TOKENS.length} characters)   # environment`), 'a token is never shown')
  t.ok(lines.includes('PORT=8080   # environment'))
  t.ok(lines.includes('HOST=127.0.0.1   # default'))
  t.ok(lines.includes('METRICS_PORT=(unset)   # unset'))
  t.notMatch(run.stdout, /hunter2|sslpassword|test-token|a-valid-token/, 'no secret anywhere')

  const refused = spawnSync(process.execPath, [fileURLToPath(new URL('../src/cli/config.ts', import.meta.url))], { encoding: 'utf8', env: { PORT: 'eighty', DATABSE_URL: 'x', PATH: process.env.PATH } })
  t.equal(refused.status, 1, 'where the service would not start, exit 1')
  t.match(refused.stderr, /did you mean DATABASE_URL\?[^]*PORT must be an integer/)
  t.notMatch(refused.stderr, /\n\s+at /, 'no stack trace')
})

t.test('docs/configuration.md is written from the sections: npm run check fails when it is out of date, naming the command', async (t) => {
  const root = fileURLToPath(new URL('../', import.meta.url))
  const check = () => spawnSync(process.execPath, [join(root, 'scripts/config-docs.ts'), '--check'], { cwd, encoding: 'utf8', env: process.env })
  const cwd = t.testdir({ docs: { 'configuration.md': readFileSync(join(root, 'docs/configuration.md'), 'utf8') } })
  const fresh = check()
  t.equal(fresh.status, 0, `the committed reference is current: ${fresh.stderr}`)
  writeFileSync(join(cwd, 'docs/configuration.md'), readFileSync(join(root, 'docs/configuration.md'), 'utf8').replace('| `3000` |', '| `3001` |'))
  const stale = check()
  t.equal(stale.status, 1)
  t.match(stale.stderr, 'docs/configuration.md is out of date with the configuration\'s sections (src/*/config.ts): run `npm run config:docs` and commit it.')
  const reference = readFileSync(join(root, 'docs/configuration.md'), 'utf8')
  for (const name of ['PORT', 'DATABASE_URL', 'API_TOKENS', 'JWT_ISSUER', 'OTEL_TRACES_SAMPLER', 'TRUST_PROXY']) t.match(reference, `\`${name}\``, `${name} is in the reference`)
  t.match(reference, '| `DATABASE_URL` or `DATABASE_URL_FILE` (secret) | `sqlite:./data/plants.db` |', 'with its default, and its file for a secret')
  t.match(reference, '| `METRICS_PORT` | *(unset: no metrics)* |', 'and what unset means')
  t.match(reference, 'An integer from 0 to 65535.', 'and the bounds its schema checks')
})
