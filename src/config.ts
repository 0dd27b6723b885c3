import { isIP } from 'node:net'
import { dirname, join } from 'node:path'
import { HOST_NAME, isHttpsOrLoopback } from './http/host.js'
import { readSecretFile } from './security/secret-file.js'
import { DEFAULT_BOUNDS } from './store/group-commit.js'
import { parseStoreUrl, redactUrl, STORE_URL_FORMS } from './store/url.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  port: number
  host: string
  databaseUrl: string
  /** Most connections each instance opens to PostgreSQL. */
  pgPoolSize: number
  /** Longest a create waits for the store before it answers 503, in ms. */
  storeTimeout: number
  /** Most creates waiting for a commit; past it, a create answers 503 at once. */
  maxPendingCreates: number
  /** Largest request body, in bytes (413 beyond). */
  bodyLimit: number
  /** Largest request line plus headers, in bytes (431 beyond). */
  maxHeaderBytes: number
  /** Longest a request may take to arrive, headers and body, in ms (408 beyond). */
  requestTimeout: number
  /** How long an idle keep-alive connection stays open, in ms. */
  keepAliveTimeout: number
  /** Most open connections; further ones are closed at once. */
  maxConnections: number
  /** Event-loop delay in ms past which API requests are shed with 503; 0 turns it off. */
  maxEventLoopDelay: number
  /** How long in-flight requests may drain after SIGTERM/SIGINT before the process exits anyway, in ms. */
  shutdownTimeout: number
  /** The accepted bearer tokens. Empty means "use the kept token" (see generated-token.ts). */
  apiTokens: string[]
  /** Where the token made for a service with no tokens configured is kept: beside the SQLite database. */
  generatedTokenFile: string
  logLevel: LogLevel
  /** Port of the Prometheus metrics listener; undefined means no metrics at all. */
  metricsPort: number | undefined
  metricsHost: string
  /** Fastify's trustProxy: which peers' X-Forwarded-* headers to believe. */
  trustProxy: boolean | number | string[]
  /** Origins whose browsers may call the API (CORS); `*` for any. Empty: none. */
  corsOrigins: string[]
  /** Most requests one token (or, for rejected tokens, one client address) may make per window; undefined: no limit. */
  rateLimit: { max: number, windowMs: number } | undefined
  /** Access tokens from one identity provider, checked against its key set; undefined: static keys only. */
  jwt: JwtConfig | undefined
  /** OpenTelemetry traces, when OTEL_* turns them on; undefined: off, and no OpenTelemetry module is loaded. */
  tracing: TracingConfig | undefined
}

/**
 * What the service decides about tracing. The rest (endpoint, headers, timeouts, the batch
 * queue, resource) the OpenTelemetry SDK reads from its own OTEL_* variables.
 */
export interface TracingConfig {
  /** otlp: OTLP over HTTP; console: spans printed to stdout, for a developer. */
  exporter: 'otlp' | 'console'
  protocol: 'http/protobuf' | 'http/json'
  /** service.name when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
  serviceName: string | undefined
  /** OTEL_TRACES_SAMPLER and its OTEL_TRACES_SAMPLER_ARG, as the SDK reads them (the service applies them as requests arrive). */
  sampler: { name: SamplerName, ratio: number }
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = typeof SAMPLERS[number]

export interface JwtConfig {
  /** The provider's issuer identifier, matched exactly against `iss`. */
  issuer: string
  /** The audiences the service accepts; a token's `aud` must name one. */
  audience: string[]
  /** Where the key set is; undefined: from the issuer's OIDC discovery document. */
  jwksUrl: string | undefined
  /** The signature algorithms accepted: asymmetric only. */
  algorithms: string[]
  /** The `typ` header a token must carry. */
  typ: string
  clockToleranceS: number
  /** Oldest `iat` accepted, in seconds. */
  maxAgeS: number
  /** Bound on each fetch of the discovery document or the key set. */
  timeoutMs: number
  /** Least time between two fetches that a token's unknown key, or a failed fetch, causes. */
  cooldownMs: number
  /** How long a fetched key set is used before it is fetched again (a key the provider dropped stops passing by then). */
  maxAgeMs: number
  /** The claim that holds the scopes; undefined: `scope` (space-delimited) or `scp` (string or array). */
  scopeClaim: string | undefined
  /** Longest token parsed, in bytes; a longer one is refused unread. */
  maxTokenBytes: number
}

/** What JWT_ALGORITHMS may name: signatures only the provider's private key can make. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const DEFAULT_JWT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA']

export const DEFAULT_DATABASE_URL = 'sqlite:./data/plants.db'
const DEFAULT_DATA_DIR = dirname(DEFAULT_DATABASE_URL.slice('sqlite:'.length))
export const DEFAULT_PG_POOL_SIZE = 10
export const MIN_TOKEN_LENGTH = 16

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// RFC 6750 b64token characters: a token with anything else could never be sent in a header.
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/

export class ConfigError extends Error {
  constructor (problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

/**
 * Reads the service's configuration from an environment. Pure apart from reading
 * API_TOKENS_FILE, and throws one ConfigError listing every problem found.
 */
export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = []

  const port = Number(env.PORT ?? 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`)
  }

  const host = env.HOST ?? '127.0.0.1'
  if (host.trim() === '') problems.push('HOST must not be empty')

  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL
  try {
    parseStoreUrl(databaseUrl)
  } catch {
    problems.push(`DATABASE_URL must look like ${STORE_URL_FORMS}, got "${redactUrl(databaseUrl)}"`)
  }

  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  }

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const value = Number(env[name] ?? fallback)
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${env[name]}"`)
    }
    return value
  }
  const pgPoolSize = int('PG_POOL_SIZE', DEFAULT_PG_POOL_SIZE, 1, 1000)
  const storeTimeout = int('STORE_TIMEOUT_MS', DEFAULT_BOUNDS.timeoutMs, 100, 600_000)
  const maxPendingCreates = int('MAX_PENDING_CREATES', DEFAULT_BOUNDS.maxPending, 1, 1_000_000)
  const bodyLimit = int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024)
  const maxHeaderBytes = int('MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024)
  const requestTimeout = int('REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000)
  const keepAliveTimeout = int('KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000)
  const maxConnections = int('MAX_CONNECTIONS', 1024, 1, 1_000_000)
  const maxEventLoopDelay = int('MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000)
  const shutdownTimeout = int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000)

  const metricsPort = env.METRICS_PORT === undefined ? undefined : int('METRICS_PORT', 0, 0, 65535)
  const metricsHost = env.METRICS_HOST ?? '127.0.0.1'
  if (metricsHost.trim() === '') problems.push('METRICS_HOST must not be empty')
  const trustProxy = readTrustProxy(env.TRUST_PROXY, problems)
  const corsOrigins = readCorsOrigins(env.CORS_ORIGINS, problems)
  const rateLimit = env.RATE_LIMIT_PER_MINUTE === undefined ? undefined : { max: int('RATE_LIMIT_PER_MINUTE', 0, 1, 1_000_000), windowMs: 60_000 }

  const jwt = readJwt(env, problems, int)
  const tracing = readTracing(env, problems)
  const apiTokens = readTokens(env, problems)
  // One token per data directory: beside the SQLite file, or in ./data with PostgreSQL.
  const dataDir = databaseUrl.startsWith('sqlite:') ? dirname(databaseUrl.slice('sqlite:'.length)) : DEFAULT_DATA_DIR
  const generatedTokenFile = join(dataDir, 'api-token')

  if (problems.length > 0) throw new ConfigError(problems)
  return { port, host, databaseUrl, pgPoolSize, storeTimeout, maxPendingCreates, bodyLimit, maxHeaderBytes, requestTimeout, keepAliveTimeout, maxConnections, maxEventLoopDelay, shutdownTimeout, apiTokens, generatedTokenFile, logLevel, metricsPort, metricsHost, trustProxy, corsOrigins, rateLimit, jwt, tracing }
}

/**
 * The OpenTelemetry SDK's own variables: tracing is on when an OTLP endpoint or a traces exporter
 * is set (and OTEL_SDK_DISABLED is not true). What the SDK would only warn about and ignore, a
 * typo in a sampler's name, say, stops the start here, as every other bad value does.
 */
function readTracing (env: Record<string, string | undefined>, problems: string[]): TracingConfig | undefined {
  // As the SDK reads them: an empty variable is an unset one.
  const otel = (name: string): string | undefined => env[name]?.trim() || undefined
  const exporter = otel('OTEL_TRACES_EXPORTER')
  const endpoint = otel('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? otel('OTEL_EXPORTER_OTLP_ENDPOINT')
  if (otel('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || exporter === 'none') return undefined
  if (exporter === undefined && endpoint === undefined) return undefined
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'console') {
    problems.push(`OTEL_TRACES_EXPORTER must be otlp, console or none, got "${exporter}"`)
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    const value = otel(name)
    if (value === undefined) continue
    let url: URL | undefined
    try {
      url = new URL(value)
    } catch {}
    if (url === undefined || !['http:', 'https:'].includes(url.protocol)) problems.push(`${name} must be an http:// or https:// URL, got "${value}"`)
  }
  const protocol = otel('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? otel('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf'
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    problems.push(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (OTLP over HTTP), got "${protocol}"`)
  }
  // The SDK's defaults: parent-based, always on; a ratio of 1.
  const sampler = (otel('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as SamplerName
  if (!SAMPLERS.includes(sampler)) problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${sampler}"`)
  const ratio = otel('OTEL_TRACES_SAMPLER_ARG')
  if (sampler.endsWith('traceidratio') && ratio !== undefined && !(Number(ratio) >= 0 && Number(ratio) <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${ratio}"`)
  }
  const named = otel('OTEL_SERVICE_NAME') !== undefined || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
  return {
    exporter: exporter === 'console' ? 'console' : 'otlp',
    protocol: protocol === 'http/json' ? 'http/json' : 'http/protobuf',
    serviceName: named ? undefined : 'plant-store',
    sampler: { name: sampler, ratio: ratio === undefined ? 1 : Number(ratio) }
  }
}

function httpsUrl (name: string, value: string, problems: string[]): string {
  if (!isHttpsOrLoopback(value)) problems.push(`${name} must be an https:// URL (http:// only on loopback), got "${value}"`)
  return value
}

/** JWT_*: access tokens from an identity provider. JWT_ISSUER turns them on; without it, no other JWT_ may be set. */
function readJwt (env: Record<string, string | undefined>, problems: string[], int: (name: string, fallback: number, min: number, max: number) => number): JwtConfig | undefined {
  const names = Object.keys(env).filter((name) => name.startsWith('JWT_') && env[name] !== undefined)
  if (env.JWT_ISSUER === undefined) {
    if (names.length > 0) problems.push(`${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} set, but JWT_ISSUER is not: set it to turn JWT access tokens on`)
    return undefined
  }
  const list = (value: string | undefined): string[] => (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')
  const issuer = httpsUrl('JWT_ISSUER', env.JWT_ISSUER, problems)
  const audience = list(env.JWT_AUDIENCE)
  if (audience.length === 0) problems.push('JWT_AUDIENCE must name the audience(s) this service accepts (comma-separated): without it, a token meant for any other API of the provider would pass')
  const algorithms = env.JWT_ALGORITHMS === undefined ? DEFAULT_JWT_ALGORITHMS : list(env.JWT_ALGORITHMS)
  const refused = algorithms.filter((alg) => !ASYMMETRIC_ALGORITHMS.includes(alg))
  if (refused.length > 0 || algorithms.length === 0) {
    problems.push(`JWT_ALGORITHMS may list only asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')}); "${refused.join('", "')}" is refused: with HS* anyone holding the shared secret signs, with none no one does`)
  }
  const typ = env.JWT_TYP ?? 'at+jwt'
  if (typ.trim() === '') problems.push('JWT_TYP must not be empty')
  return {
    issuer,
    audience,
    jwksUrl: env.JWT_JWKS_URL === undefined ? undefined : httpsUrl('JWT_JWKS_URL', env.JWT_JWKS_URL, problems),
    algorithms,
    typ,
    clockToleranceS: int('JWT_CLOCK_TOLERANCE_S', 30, 0, 600),
    maxAgeS: int('JWT_MAX_AGE_S', 86_400, 60, 30 * 86_400),
    timeoutMs: int('JWT_JWKS_TIMEOUT_MS', 3000, 100, 60_000),
    cooldownMs: int('JWT_JWKS_COOLDOWN_MS', 30_000, 0, 3_600_000),
    maxAgeMs: int('JWT_JWKS_MAX_AGE_MS', 600_000, 1000, 86_400_000),
    scopeClaim: env.JWT_SCOPE_CLAIM,
    maxTokenBytes: int('JWT_MAX_TOKEN_BYTES', 8192, 256, 1024 * 1024)
  }
}

/** CORS_ORIGINS: exact origins (scheme://host[:port]), comma-separated, or `*`. */
function readCorsOrigins (value: string | undefined, problems: string[]): string[] {
  if (value === undefined || value.trim() === '') return []
  const origins = value.split(',').map((origin) => origin.trim())
  const bad = origins.filter((origin) => origin !== '*' && !isOrigin(origin))
  if (bad.length > 0) problems.push(`CORS_ORIGINS must list origins such as https://app.example.com (scheme, host and port only), or *; "${bad.join('", "')}" is not one`)
  return origins
}

function isOrigin (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value && HOST_NAME.test(url.hostname)
  } catch {
    return false
  }
}

// proxy-addr's names for address ranges, which Fastify's trustProxy accepts too.
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** TRUST_PROXY: true, false, a hop count, or a comma-separated list of addresses and CIDRs. */
function readTrustProxy (value: string | undefined, problems: string[]): boolean | number | string[] {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) return Number(value)
  const entries = value.split(',').map((entry) => entry.trim())
  const bad = entries.filter((entry) => {
    if (PROXY_RANGES.has(entry)) return false
    const [address, prefix, ...rest] = entry.split('/')
    const version = isIP(address)
    if (version === 0 || rest.length > 0) return true
    return prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128))
  })
  if (bad.length > 0) problems.push(`TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses and CIDRs; "${bad.join('", "')}" is none of those`)
  return entries
}

/** Why a token cannot be used, or undefined when it can. */
export function tokenProblem (token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH) return `is shorter than ${MIN_TOKEN_LENGTH} characters`
  if (!TOKEN_PATTERN.test(token)) return 'has characters other than letters, digits and -._~+/ (with trailing =)'
  return undefined
}

function readTokens (env: Record<string, string | undefined>, problems: string[]): string[] {
  if (env.API_TOKENS !== undefined && env.API_TOKENS_FILE !== undefined) {
    problems.push('set either API_TOKENS or API_TOKENS_FILE, not both')
    return []
  }
  let source: string
  let raw: string[]
  if (env.API_TOKENS_FILE !== undefined) {
    source = 'API_TOKENS_FILE'
    try {
      raw = readSecretFile(env.API_TOKENS_FILE).split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#'))
    } catch (err) {
      problems.push(`API_TOKENS_FILE cannot be read: ${(err as Error).message}`)
      return []
    }
  } else if (env.API_TOKENS !== undefined) {
    source = 'API_TOKENS'
    raw = env.API_TOKENS.split(',')
  } else {
    return []
  }

  if (raw.length === 0) problems.push(`${source} holds no token`)
  raw.forEach((token, i) => {
    const problem = tokenProblem(token)
    if (problem !== undefined) problems.push(`${source}: token #${i + 1} ${problem}`)
  })
  return raw
}
