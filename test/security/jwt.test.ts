import { createHmac, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { base64url } from 'jose'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { buildApp } from '../../src/app.ts'
import { assertError, buildTestApp, captureLog, freshDatabase, testConfig, TOKEN } from '../helpers/app.ts'
import { AUDIENCE, startBystander, startProvider, type Provider } from '../helpers/identity-provider.ts'

// Access tokens from an identity provider the test runs itself (discovery and a JWKS on
// 127.0.0.1), checked beside the static keys through the same bearer guard: what passes, what is
// refused and how, what the key server hears, and how the service behaves when the provider is
// slow, failing or gone.

// The fetch bound is short only where a test hangs the provider and waits it out: elsewhere a
// fetch shares its event loop with three other tests building their apps, which on a loaded host
// held a boot fetch past half a second (a second fetch, a 503).
const TIMEOUT_MS = 1000
const COOLDOWN_MS = 300
const SHORT_FETCH = { JWT_JWKS_TIMEOUT_MS: String(TIMEOUT_MS) }

/** The service trusting `provider`, with a short cooldown so the test runs fast. */
async function jwtApp (t: Test, provider: Provider, env: Record<string, string> = {}, logStream?: { write: (line: string) => void }): Promise<FastifyInstance> {
  const config = await testConfig(t, {
    LOG_LEVEL: logStream === undefined ? 'silent' : 'info',
    JWT_ISSUER: provider.issuer,
    JWT_AUDIENCE: AUDIENCE,
    JWT_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
    ...env
  })
  return await buildTestApp(t, config, { logStream })
}

let nextId = 1
const create = async (app: FastifyInstance, token: string) => await app.inject({
  method: 'POST',
  url: '/plants',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  payload: JSON.stringify({ id: nextId++, name: 'Fern' })
})
const now = () => Math.floor(Date.now() / 1000)

// Each test starts its own provider and service, and most of their time is waits on timers.
t.jobs = 4

t.test('valid RS256, ES256 and EdDSA access tokens create a plant', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
    const res = await create(app, await provider.mint({ alg }))
    t.equal(res.statusCode, 200, alg)
  }
  t.equal((await create(app, TOKEN)).statusCode, 200, 'and the static key still does')
  t.same(provider.fetches, { discovery: 1, jwks: 1 }, 'discovery and the key set, each fetched once, at boot')
})

t.test('refused tokens get 401 invalid_token', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  const cases: Array<[string, Parameters<Provider['mint']>[0], RegExp?]> = [
    ['expired beyond the tolerance', { claims: { iat: now() - 600, exp: now() - 31 } }, /has expired/],
    ['not yet valid', { claims: { nbf: now() + 120 } }, /not valid yet/],
    ['another issuer', { claims: { iss: 'https://elsewhere.example/realms/plants' } }],
    ['another audience', { claims: { aud: 'another-api' } }],
    ['another typ', { header: { typ: 'dpop+jwt' } }],
    ['an ID token (typ JWT) where at+jwt is required', { header: { typ: 'JWT' }, claims: { aud: 'swagger-ui', nonce: 'n' } }],
    ['issued in the future', { claims: { iat: now() + 120 } }],
    ['no exp', { claims: { exp: undefined } }],
    ['no sub', { claims: { sub: undefined } }]
  ]
  for (const [what, options, message] of cases) {
    const res = await create(app, await provider.mint(options))
    assertError(t, res, 401, message ?? /^Invalid bearer token$/)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="plants", error="invalid_token"', what)
  }
  const tolerated = await create(app, await provider.mint({ claims: { iat: now() - 600, exp: now() - 20 } }))
  t.equal(tolerated.statusCode, 200, 'expired within the 30 s tolerance still passes')
})

t.test('attacks get 401, and the key servers they name hear nothing', async (t) => {
  const provider = await startProvider(t)
  const bystander = await startBystander(t)
  const app = await jwtApp(t, provider)
  const fetched = { ...provider.fetches }
  const encode = (part: object) => base64url.encode(JSON.stringify(part))
  const claims = { iss: provider.issuer, aud: AUDIENCE, sub: 'mallory', scope: 'plants:write', iat: now(), exp: now() + 300 }

  const unsigned = `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims)}.`
  assertError(t, await create(app, unsigned), 401)

  // Algorithm confusion: HS256, with the provider's public key as the shared secret.
  const header = encode({ alg: 'HS256', typ: 'at+jwt', kid: 'whatever' })
  const body = encode(claims)
  const mac = createHmac('sha256', await provider.publicPem()).update(`${header}.${body}`).digest('base64url')
  assertError(t, await create(app, `${header}.${body}.${mac}`), 401)

  const mallory = await provider.foreignKey()
  assertError(t, await create(app, await provider.mint({ key: mallory, header: { jwk: mallory.publicJwk } })), 401, /^Invalid bearer token$/)
  assertError(t, await create(app, await provider.mint({ key: mallory, header: { jku: `${bystander.url}/jwks.json` } })), 401)
  assertError(t, await create(app, await provider.mint({ key: mallory, header: { x5u: `${bystander.url}/cert.pem` } })), 401)
  // The provider's own kid on a token the attacker signed: the signature fails.
  const providerKid = JSON.parse(Buffer.from((await provider.mint()).split('.')[0], 'base64url').toString()).kid
  assertError(t, await create(app, await provider.mint({ key: { ...mallory, kid: providerKid } })), 401, /^Invalid bearer token$/)
  t.equal(bystander.requests(), 0, 'no request to a jku or x5u server')
  t.ok(provider.fetches.jwks - fetched.jwks <= 1, 'the provider\'s key set is fetched at most once more (the unknown kids)')
})

t.test('a token without the operation\'s scope gets 403 with the challenge; every claim form is read', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  const res = await create(app, await provider.mint({ claims: { scope: 'openid plants:read' } }))
  assertError(t, res, 403, /lacks the scope this operation requires: plants:write/)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="plants", error="insufficient_scope", scope="plants:write"')
  t.equal((await create(app, await provider.mint({ claims: { scope: undefined } }))).statusCode, 403, 'no scope at all')
  t.equal((await create(app, await provider.mint({ claims: { scope: undefined, scp: ['plants:read', 'plants:write'] } }))).statusCode, 200, 'scp as an array')
  t.equal((await create(app, await provider.mint({ claims: { scope: undefined, scp: 'plants:write' } }))).statusCode, 200, 'scp as a string')

  const custom = await jwtApp(t, provider, { JWT_SCOPE_CLAIM: 'permissions' })
  t.equal((await create(custom, await provider.mint({ claims: { scope: undefined, permissions: ['plants:write'] } }))).statusCode, 200, 'JWT_SCOPE_CLAIM names the claim')
  t.equal((await create(custom, await provider.mint())).statusCode, 403, 'and only that claim')
})

t.test('a rotated key works without a restart, with one extra fetch', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  t.equal((await create(app, await provider.mint())).statusCode, 200)
  await sleep(COOLDOWN_MS + 50)
  await provider.rotate()
  const before = provider.fetches.jwks
  // 100 requests at once, each with its own token signed by the new key: one fetch for all.
  const statuses = await Promise.all(Array.from({ length: 100 }, async () => (await create(app, await provider.mint())).statusCode))
  t.same([...new Set(statuses)], [200], 'all accepted')
  t.equal(provider.fetches.jwks - before, 1, 'one fetch for 100 concurrent cold requests')
})

t.test('a flood of random kids costs at most one fetch per cooldown', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  await sleep(COOLDOWN_MS + 50)
  const before = provider.fetches.jwks
  const started = Date.now()
  for (let i = 0; i < 50; i++) {
    assertError(t, await create(app, await provider.mint({ header: { kid: randomUUID() } })), 401)
  }
  const windows = Math.ceil((Date.now() - started) / COOLDOWN_MS)
  t.ok(provider.fetches.jwks - before <= windows, `${provider.fetches.jwks - before} fetches in ${windows} cooldowns`)
  t.ok(provider.fetches.jwks - before >= 1, 'an unknown kid does look once')
})

t.test('a hanging provider: answers within the fetch timeout; cached keys pass, unknown keys get 503, static keys pass', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { ...SHORT_FETCH, JWT_JWKS_COOLDOWN_MS: '0' })
  t.equal((await create(app, await provider.mint())).statusCode, 200, 'the key is cached')
  provider.mode = 'hang'
  const timed = async (token: string) => {
    const started = Date.now()
    const res = await create(app, token)
    t.ok(Date.now() - started < TIMEOUT_MS * 6, `answered in ${Date.now() - started} ms, bounded by the fetch timeout (a hung fetch never answers)`)
    return res
  }
  const stranger = await provider.foreignKey()
  const results = await Promise.all([
    timed(await provider.mint()),
    timed(await provider.mint({ key: stranger })),
    timed(TOKEN),
    timed(await provider.mint({ alg: 'ES256' }))
  ])
  t.equal(results[0].statusCode, 200, 'a token signed with a cached key passes')
  assertError(t, results[1], 503, /signing keys cannot be fetched/)
  t.match(results[1].headers['retry-after'], /^\d+$/, 'with Retry-After')
  t.equal(results[1].headers['www-authenticate'], undefined, 'no challenge: the token may be good')
  t.equal(results[2].statusCode, 200, 'a static key passes')
  t.equal(results[3].statusCode, 200, 'another cached key passes')

  provider.mode = 'error'
  assertError(t, await timed(await provider.mint({ key: stranger })), 503)
  t.equal((await timed(await provider.mint())).statusCode, 200, 'a provider answering 500: cached keys still pass')
  provider.mode = 'up'
})

t.test('past JWT_JWKS_MAX_AGE_MS the set is fetched again; with the provider gone, the last set still serves', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { ...SHORT_FETCH, JWT_JWKS_MAX_AGE_MS: '1000' })
  t.equal((await create(app, await provider.mint())).statusCode, 200)
  provider.mode = 'hang'
  await sleep(1100)
  const fetched = provider.fetches.jwks
  const started = Date.now()
  t.equal((await create(app, await provider.mint({ alg: 'ES256' }))).statusCode, 200, 'a key of the last set passes')
  t.ok(Date.now() - started < TIMEOUT_MS * 6, 'bounded by the fetch timeout')
  t.equal(provider.fetches.jwks, fetched + 1, 'after one attempt to fetch a fresh set')
  assertError(t, await create(app, await provider.mint({ key: await provider.foreignKey() })), 503)
})

t.test('a key the provider drops stops passing at the next fetch, remembered tokens too', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider)
  const old = await provider.mint()
  t.equal((await create(app, old)).statusCode, 200, 'verified and remembered')
  await sleep(COOLDOWN_MS + 50)
  await provider.rotate()
  t.equal((await create(app, await provider.mint())).statusCode, 200, 'a token of the new key: the set is fetched, and has changed')
  assertError(t, await create(app, old), 401, /^Invalid bearer token$/)
})

t.test('a provider down at boot: the service starts, JWTs answer 503, then pass once it is back', async (t) => {
  const provider = await startProvider(t)
  provider.mode = 'error'
  const app = await jwtApp(t, provider)
  t.equal((await create(app, TOKEN)).statusCode, 200, 'static keys work')
  assertError(t, await create(app, await provider.mint()), 503)
  provider.mode = 'up'
  await sleep(COOLDOWN_MS + 50)
  t.equal((await create(app, await provider.mint())).statusCode, 200, 'recovered by itself')
})

t.test('boot is refused for a discovery issuer mismatch, a JWKS URL in the clear, or a symmetric algorithm', async (t) => {
  const provider = await startProvider(t)
  provider.discoveredIssuer = 'https://impostor.example/realms/plants'
  const config = await testConfig(t, { JWT_ISSUER: provider.issuer, JWT_AUDIENCE: AUDIENCE })
  await t.rejects(buildApp(config), /names the issuer "https:\/\/impostor.example\/realms\/plants", not JWT_ISSUER's/)
  provider.discoveredIssuer = provider.issuer
  provider.discoveredJwksUri = 'http://keys.example/certs'
  await t.rejects(buildApp({ ...config, store: { ...config.store, databaseUrl: await freshDatabase(t) } }), /names no https:\/\/ jwks_uri \(got "http:\/\/keys.example\/certs"\)/, 'nor a key set in the clear')

  const base = { JWT_ISSUER: 'https://id.example/realms/plants', JWT_AUDIENCE: AUDIENCE }
  t.throws(() => loadConfig({ ...base, JWT_JWKS_URL: 'http://id.example/certs' }), /JWT_JWKS_URL must be an https:\/\/ URL \(http:\/\/ only on loopback\)/)
  t.throws(() => loadConfig({ ...base, JWT_ISSUER: 'http://id.example/realms/plants' }), /JWT_ISSUER must be an https:\/\/ URL/)
  t.ok(loadConfig({ ...base, JWT_JWKS_URL: 'http://[::1]:8080/certs' }).security.jwt, 'http on loopback is allowed')
  for (const algorithms of ['RS256,HS256', 'none', 'HS512']) {
    t.throws(() => loadConfig({ ...base, JWT_ALGORITHMS: algorithms }), /JWT_ALGORITHMS may list only asymmetric algorithms/, algorithms)
  }
  t.throws(() => loadConfig({ JWT_ISSUER: base.JWT_ISSUER }), /JWT_AUDIENCE must name the audience/)
  t.throws(() => loadConfig({ JWT_AUDIENCE: AUDIENCE }), /JWT_AUDIENCE is set, but JWT_ISSUER is not/)
  const defaults = { jwksUrl: undefined, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'], typ: 'at+jwt', clockToleranceS: 30, maxAgeS: 86_400, timeoutMs: 3000, cooldownMs: 30_000, maxAgeMs: 600_000, scopeClaim: undefined, maxTokenBytes: 8192 }
  t.same(loadConfig(base).security.jwt, { issuer: base.JWT_ISSUER, audience: [AUDIENCE], ...defaults }, 'the defaults')
})

t.test('a token over JWT_MAX_TOKEN_BYTES is refused unread', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { JWT_MAX_TOKEN_BYTES: '1024', METRICS_PORT: '0' })
  await sleep(COOLDOWN_MS + 50)
  const fetched = provider.fetches.jwks
  // Shaped as a JWT whose key is unknown: read, it would make the key set be fetched again.
  const big = await provider.mint({ header: { kid: randomUUID() }, claims: { padding: 'x'.repeat(2000) } })
  assertError(t, await create(app, big), 401)
  t.equal(provider.fetches.jwks, fetched, 'no fetch: its kid was never read')
  const metrics = await (await fetch(app.metricsUrl!)).text()
  t.match(metrics, /plant_store_jwt_total\{outcome="oversize"\} 1/)
})

t.test('a verified token is remembered only until its exp', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { JWT_CLOCK_TOLERANCE_S: '0' })
  const token = await provider.mint({ claims: { exp: now() + 2 } })
  t.equal((await create(app, token)).statusCode, 200, 'verified, and cached')
  t.equal((await create(app, token)).statusCode, 200, 'from the cache')
  await sleep((now() + 2) * 1000 - Date.now() + 1100)
  assertError(t, await create(app, token), 401, /has expired/)
})

t.test('rate limits count a subject, across its reissued tokens', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { RATE_LIMIT_PER_MINUTE: '3' })
  const first = await provider.mint({ claims: { sub: 'client-a' } })
  const second = await provider.mint({ claims: { sub: 'client-a' } })
  t.same([(await create(app, first)).statusCode, (await create(app, second)).statusCode, (await create(app, first)).statusCode], [200, 200, 200])
  assertError(t, await create(app, second), 429)
  t.equal((await create(app, await provider.mint({ claims: { sub: 'client-b' } }))).statusCode, 200, 'another subject has its own count')
})

t.test('the access line names the principal; no token or its parts reach the logs; the metrics count', async (t) => {
  const provider = await startProvider(t)
  const log = captureLog()
  const app = await jwtApp(t, provider, { METRICS_PORT: '0' }, log.logStream)
  const token = await provider.mint({ claims: { sub: 'service-account-7' } })
  await create(app, token)
  await create(app, await provider.mint({ claims: { aud: 'another-api' } }))
  await create(app, await provider.mint({ claims: { scope: 'openid' } }))
  await create(app, TOKEN)
  const access = log.lines.filter((line) => line.msg === 'request')
  t.equal(access[0].principal, 'service-account-7', 'a JWT\'s subject')
  t.equal(access[1].principal, undefined, 'a refused token names no one')
  t.match(access[3].principal, /^key:[\w-]{12}$/, 'a static key: a prefix of its identity')
  const text = log.raw.join('')
  t.notOk(text.includes(token.split('.')[2]) || text.includes(token.split('.')[1]) || text.includes(TOKEN), 'no token, or part of one, is logged')
  const metrics = await (await fetch(app.metricsUrl!)).text()
  t.match(metrics, /plant_store_jwt_total\{outcome="accepted"\} 1/)
  t.match(metrics, /plant_store_jwt_total\{outcome="bad_claims"\} 1/)
  t.match(metrics, /plant_store_jwt_total\{outcome="insufficient_scope"\} 1/)
  t.match(metrics, /plant_store_jwks_fetches_total\{document="discovery",result="ok"\} 1/)
  t.match(metrics, /plant_store_jwks_fetches_total\{document="jwks",result="ok"\} 1/)
})

t.test('an explicit JWT_JWKS_URL skips discovery; JWT_TYP=JWT accepts a provider\'s plain JWTs', async (t) => {
  const provider = await startProvider(t)
  const app = await jwtApp(t, provider, { JWT_JWKS_URL: `${provider.issuer}/protocol/openid-connect/certs`, JWT_TYP: 'JWT' })
  t.equal((await create(app, await provider.mint({ header: { typ: 'JWT' } }))).statusCode, 200)
  assertError(t, await create(app, await provider.mint()), 401, /^Invalid bearer token$/)
  t.same(provider.fetches, { discovery: 0, jwks: 1 })
})

t.test('with JWT checks off, a provider\'s token is just an unknown one', async (t) => {
  const provider = await startProvider(t)
  const app = await buildTestApp(t)
  assertError(t, await create(app, await provider.mint()), 401, /^Invalid bearer token$/)
  t.same(provider.fetches, { discovery: 0, jwks: 0 })
})
