import Database from 'better-sqlite3'
import { connect } from 'node:net'
import t from 'tap'
import { buildTestApp, freshDatabase, TOKEN, testConfig } from '../helpers/app.ts'

// Every kind of answer, over real HTTP, carries the API's security headers (OWASP's REST
// Security Cheat Sheet); Strict-Transport-Security only when the request came over HTTPS.

const API = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer'
}
const OTHER_TOKEN = 'other-token-0123456789abcdef'

function headersOf (response: Response): Record<string, string | null> {
  return Object.fromEntries(Object.keys(API).map((name) => [name, response.headers.get(name)]))
}

/** The raw answer to bytes that are not HTTP, which Node's parser refuses before Fastify sees them. */
async function rawAnswer (port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (chunk) => { received += chunk })
  socket.write(bytes)
  await new Promise((resolve) => socket.on('close', resolve))
  return received
}

t.test('API answers of every status carry the security headers', async (t) => {
  const databaseUrl = await freshDatabase(t, 'sqlite')
  const config = await testConfig(t, { DATABASE_URL: databaseUrl, API_TOKENS: `${TOKEN},${OTHER_TOKEN}`, BODY_LIMIT_BYTES: '1024', RATE_LIMIT_PER_MINUTE: '20' })
  const app = await buildTestApp(t, config)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const post = async (body: string, { token = TOKEN, type = 'application/json' } = {}) =>
    await fetch(`${base}/plants`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': type }, body })

  const answers: Record<number, Response> = {
    200: await post('{"id":1,"name":"Fern"}'),
    400: await post('{"id":"one"}'),
    401: await fetch(`${base}/plants`, { method: 'POST' }),
    404: await fetch(`${base}/nowhere`),
    405: await fetch(`${base}/plants`),
    409: await post('{"id":1,"name":"Palm"}'),
    413: await post(JSON.stringify({ id: 2, name: 'x'.repeat(2048) })),
    415: await post('id=3', { type: 'text/plain' })
  }
  // A token past its limit.
  for (let i = 0; i <= config.security.rateLimit!.max; i++) answers[429] = await post(`{"id":${100 + i},"name":"Fern"}`, { token: OTHER_TOKEN })
  // A store that cannot take the write: another connection holds SQLite's write lock.
  const other = new Database(databaseUrl.slice('sqlite:'.length))
  other.exec('BEGIN IMMEDIATE')
  answers[503] = await post('{"id":4,"name":"Fern"}')
  other.exec('ROLLBACK')
  other.close()

  for (const [status, res] of Object.entries(answers)) {
    t.equal(res.status, Number(status))
    t.same(headersOf(res), API, `${status}: the API's security headers`)
    t.equal(res.headers.get('strict-transport-security'), null, `${status}: no HSTS over plain HTTP`)
  }

  const port = Number(new URL(base).port)
  const malformed = await rawAnswer(port, 'NOT HTTP\r\n\r\n')
  t.match(malformed, /^HTTP\/1.1 400 /, 'an early 400 from the HTTP parser')
  for (const [name, value] of Object.entries(API)) t.match(malformed, `\r\n${name}: ${value}\r\n`, `the early 400 has ${name}`)
  t.match(malformed, /\r\nX-Request-Id: [0-9a-f-]{36}\r\n/, 'and an id, like every answer')
})

t.test('Strict-Transport-Security only over HTTPS, as Fastify sees it (TRUST_PROXY)', async (t) => {
  const https = { 'x-forwarded-proto': 'https' }
  const trusting = await buildTestApp(t, await testConfig(t, { TRUST_PROXY: 'true' }))
  const hsts = async (app: typeof trusting, headers: Record<string, string>) =>
    (await app.inject({ method: 'POST', url: '/plants', headers })).headers['strict-transport-security']
  t.equal(await hsts(trusting, https), 'max-age=31536000', 'HTTPS at a trusted proxy: HSTS')
  t.equal(await hsts(trusting, {}), undefined, 'plain HTTP: none')
  t.equal((await trusting.inject({ url: '/docs/', headers: https })).headers['strict-transport-security'], 'max-age=31536000', 'on the docs too')
  const untrusting = await buildTestApp(t)
  t.equal(await hsts(untrusting, https), undefined, 'a forwarded header from an untrusted peer: none')
})

t.test('/docs: a CSP under which Swagger UI works, never framed, never sniffed', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/docs/', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js']) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200, url)
    const csp = String(res.headers['content-security-policy'])
    t.match(csp, /(^|; )script-src 'self'(;|$)/, `${url}: scripts from the service only`)
    t.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, `${url}: no framing`)
    t.notMatch(csp, /unsafe-inline|unsafe-eval/, `${url}: nothing unsafe`)
    t.equal(res.headers['x-frame-options'], 'DENY', `${url}: no framing, in old browsers too`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
  }
})

t.test('/openapi.json and /openapi.yaml: nosniff, and cacheable with an ETag', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/openapi.json', '/openapi.yaml']) {
    const first = await app.inject({ url })
    t.equal(first.headers['x-content-type-options'], 'nosniff', url)
    t.equal(first.headers['cache-control'], 'no-cache', `${url}: kept, but revalidated`)
    const etag = String(first.headers.etag)
    t.match(etag, /^"[^"]+"$/, `${url}: a strong ETag`)
    const again = await app.inject({ url, headers: { 'if-none-match': etag } })
    t.equal(again.statusCode, 304, `${url}: unchanged, so 304`)
    t.equal(again.body, '', `${url}: with no body`)
    const elsewhere = await app.inject({ url, headers: { host: 'plants.example:8443', 'if-none-match': etag } })
    t.equal(elsewhere.statusCode, 200, `${url}: another base_url is another document`)
    t.not(elsewhere.headers.etag, etag)
  }
})
