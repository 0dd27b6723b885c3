import { integer, optional, section, string, text, type ValuesOf } from '../config/section.ts'
import { isHttpsOrLoopback } from '../http/host.ts'

// The security layer's configuration: the static API tokens, the rate limit, and the identity
// provider whose access tokens are accepted beside them.

export const MIN_TOKEN_LENGTH = 16
// RFC 6750 b64token characters: a token with anything else could never be sent in a header.
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/
/** What JWT_ALGORITHMS may name: signatures only the provider's private key can make. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

const variables = {
  API_TOKENS: optional(string({ description: `Unset: the kept token. Comma-separated bearer tokens; each at least ${MIN_TOKEN_LENGTH} characters of \`A-Z a-z 0-9 - . _ ~ + /\` (trailing \`=\` allowed).` })),
  RATE_LIMIT_PER_MINUTE: optional(integer(1, 1_000_000, { description: 'Unset: no limit. Most requests one bearer token may make per minute (on each instance, or on all together with `RATE_LIMIT_REDIS_URL`); past it, 429 with `Retry-After`. Requests whose token is refused (or missing) count per client address instead, under the same limit. See [rate limits](operating.md#rate-limits).' })),
  RATE_LIMIT_REDIS_URL: optional(string({ description: 'Unset: each instance counts in its own memory. `redis://` (or `rediss://`, TLS) URL of Redis 6 or later, or Valkey, with its password in the URL: every instance counts each token\'s requests there, together. While it does not answer, each instance counts on its own, at the same limit. See [rate limits across replicas](operating.md#rate-limits-across-replicas).' })),
  RATE_LIMIT_REDIS_PREFIX: text({ default: 'plant-store:rate-limit:', description: 'What the keys of the counts in Redis begin with; then `token:` or `address:` and the count\'s key.' }),
  RATE_LIMIT_REDIS_TIMEOUT_MS: integer(10, 5000, { default: 200, description: 'Bound on each Redis command; past it, the instance counts on its own until Redis answers a ping (one a second).' }),
  JWT_ISSUER: optional(string({ description: 'Unset: static keys only. The identity provider\'s issuer (exact match with `iss`); setting it turns access tokens from that provider on, beside the static keys. `https://` (`http://` only on loopback).' })),
  JWT_AUDIENCE: optional(string({ description: 'Required with `JWT_ISSUER`. Comma-separated audiences this service accepts; a token\'s `aud` must name one.' })),
  JWT_JWKS_URL: optional(string({ description: 'Unset: from discovery. The provider\'s key set; unset, it is found by OIDC discovery (`<issuer>/.well-known/openid-configuration`), and the start is refused when that document names another issuer. `https://` (`http://` only on loopback).' })),
  JWT_ALGORITHMS: string({ default: 'RS256,PS256,ES256,EdDSA', description: `Accepted signature algorithms, comma-separated; asymmetric only (${ASYMMETRIC_ALGORITHMS.join(', ')}): \`HS*\` and \`none\` stop the start.` }),
  JWT_TYP: text({ default: 'at+jwt', description: 'The `typ` header a token must carry (RFC 9068); `JWT` for a provider that types its access tokens so.' }),
  JWT_SCOPE_CLAIM: optional(string({ description: 'Unset: `scope` or `scp`. The claim that holds a token\'s scopes; unset, `scope` (space-delimited) or `scp` (string or array).' })),
  JWT_CLOCK_TOLERANCE_S: integer(0, 600, { default: 30, description: 'Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.' }),
  JWT_MAX_AGE_S: integer(60, 30 * 86_400, { default: 86_400, description: 'Oldest `iat` accepted, in seconds.' }),
  JWT_MAX_TOKEN_BYTES: integer(256, 1024 * 1024, { default: 8192, description: 'Longest token read; a longer one is refused (401) unparsed.' }),
  JWT_JWKS_TIMEOUT_MS: integer(100, 60_000, { default: 3000, description: 'Bound on each fetch from the provider, and on any request\'s wait for its keys.' }),
  JWT_JWKS_COOLDOWN_MS: integer(0, 3_600_000, { default: 30_000, description: 'Least time between two fetches of the key set caused by an unknown key, or after a failed fetch.' }),
  JWT_JWKS_MAX_AGE_MS: integer(1000, 86_400_000, { default: 600_000, description: 'How long a fetched key set is used before it is fetched again.' })
}

export const securityConfig = section({
  title: 'Security: tokens and rate limits',
  notes: 'With neither `API_TOKENS` nor `API_TOKENS_FILE`, the token kept in `api-token` beside the SQLite file (`./data/api-token` with PostgreSQL) is used, made on the first start. `API_TOKENS_FILE` holds one token per line (`#` comments allowed) and is followed as it changes (a Kubernetes Secret\'s update too; `SIGHUP` re-reads it at once), so tokens rotate without a restart; a file that fails the checks is refused and the tokens in force stay ([token rotation](operating.md#token-rotation)). The `JWT_*` variables: [tokens from an identity provider](identity-provider.md).',
  variables,
  secrets: ['API_TOKENS', 'RATE_LIMIT_REDIS_URL'],
  read: ({ values, sourceOf, problem }) => ({
    apiTokens: apiTokens(values.API_TOKENS, sourceOf('API_TOKENS') === 'file', problem),
    rateLimit: rateLimit(values, problem),
    jwt: jwt(values, sourceOf, problem)
  })
})

export type SecurityConfig = ReturnType<typeof securityConfig.read>
export type RedisLimitConfig = NonNullable<NonNullable<SecurityConfig['rateLimit']>['redis']>
export type JwtConfig = NonNullable<SecurityConfig['jwt']>

/** Why a token cannot be used, or undefined when it can. */
export function tokenProblem (token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH) return `is shorter than ${MIN_TOKEN_LENGTH} characters`
  if (!TOKEN_PATTERN.test(token)) return 'has characters other than letters, digits and -._~+/ (with trailing =)'
  return undefined
}

/** API_TOKENS, comma-separated; or from its file, one a line with # comments. Empty: the kept token. */
function apiTokens (value: string | undefined, fromFile: boolean, problem: (message: string) => void): string[] {
  if (value === undefined) return []
  const source = fromFile ? 'API_TOKENS_FILE' : 'API_TOKENS'
  const tokens = fromFile ? value.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#')) : value.split(',')
  if (tokens.length === 0) problem(`${source} holds no token`)
  tokens.forEach((token, i) => {
    const why = tokenProblem(token)
    if (why !== undefined) problem(`${source}: token #${i + 1} ${why}`)
  })
  return tokens
}

/** RATE_LIMIT_*: the limit, and where it is counted (RATE_LIMIT_REDIS_URL: in Redis, by every instance). */
function rateLimit (values: ValuesOf<typeof variables>, problem: (message: string) => void) {
  const url = values.RATE_LIMIT_REDIS_URL
  if (url !== undefined) {
    // Never the URL itself in a problem: it holds the password.
    if (!/^rediss?:\/\/[^/?#]/.test(url)) problem('RATE_LIMIT_REDIS_URL must be a redis:// or rediss:// URL')
    if (values.RATE_LIMIT_PER_MINUTE === undefined) problem('RATE_LIMIT_REDIS_URL is set, but RATE_LIMIT_PER_MINUTE is not: set the limit it counts')
  }
  if (values.RATE_LIMIT_PER_MINUTE === undefined) return undefined
  const redis = url === undefined ? undefined : { url, prefix: values.RATE_LIMIT_REDIS_PREFIX, timeoutMs: values.RATE_LIMIT_REDIS_TIMEOUT_MS }
  return { max: values.RATE_LIMIT_PER_MINUTE, windowMs: 60_000, ...(redis && { redis }) }
}

/** JWT_*: access tokens from an identity provider. JWT_ISSUER turns them on; without it, no other JWT_ may be set. */
function jwt (values: ValuesOf<typeof variables>, sourceOf: (name: string) => string, problem: (message: string) => void) {
  if (values.JWT_ISSUER === undefined) {
    const set = Object.keys(values).filter((name) => name.startsWith('JWT_') && sourceOf(name) === 'environment')
    if (set.length > 0) problem(`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set, but JWT_ISSUER is not: set it to turn JWT access tokens on`)
    return undefined
  }
  const httpsUrl = (name: string, value: string): string => {
    if (!isHttpsOrLoopback(value)) problem(`${name} must be an https:// URL (http:// only on loopback), got "${value}"`)
    return value
  }
  const list = (value: string | undefined): string[] => (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '')
  const audience = list(values.JWT_AUDIENCE)
  if (audience.length === 0) problem('JWT_AUDIENCE must name the audience(s) this service accepts (comma-separated): without it, a token meant for any other API of the provider would pass')
  const algorithms = list(values.JWT_ALGORITHMS)
  const refused = algorithms.filter((alg) => !ASYMMETRIC_ALGORITHMS.includes(alg))
  if (refused.length > 0 || algorithms.length === 0) {
    problem(`JWT_ALGORITHMS may list only asymmetric algorithms (${ASYMMETRIC_ALGORITHMS.join(', ')}); "${refused.join('", "')}" is refused: with HS* anyone holding the shared secret signs, with none no one does`)
  }
  return {
    issuer: httpsUrl('JWT_ISSUER', values.JWT_ISSUER),
    audience,
    jwksUrl: values.JWT_JWKS_URL === undefined ? undefined : httpsUrl('JWT_JWKS_URL', values.JWT_JWKS_URL),
    algorithms,
    typ: values.JWT_TYP,
    clockToleranceS: values.JWT_CLOCK_TOLERANCE_S,
    maxAgeS: values.JWT_MAX_AGE_S,
    timeoutMs: values.JWT_JWKS_TIMEOUT_MS,
    cooldownMs: values.JWT_JWKS_COOLDOWN_MS,
    maxAgeMs: values.JWT_JWKS_MAX_AGE_MS,
    scopeClaim: values.JWT_SCOPE_CLAIM,
    maxTokenBytes: values.JWT_MAX_TOKEN_BYTES
  }
}
