import t from 'tap'
import { allowedMethods } from '../../src/openapi/routes/methods.ts'
import { routesFromDocument } from '../../src/openapi/routes/routes.ts'
import { buildTestApp, document, testConfig, TOKEN } from '../helpers/app.ts'

// CORS over real HTTP, as a browser would speak it. The browser itself is test/http/cors-browser.system.test.ts.

const APP = 'http://app.example.com:5173'
const OTHER = 'https://evil.example.com'
const CORS_HEADERS = /^access-control-/

async function serve (t: Parameters<typeof buildTestApp>[0], corsOrigins: string[]) {
  const app = await buildTestApp(t, await testConfig(t, { CORS_ORIGINS: corsOrigins.join(',') }))
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

const preflight = (origin: string, method = 'POST', headers = 'authorization,content-type'): RequestInit =>
  ({ method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } })
const create = (origin: string | undefined, id: number, token = TOKEN): RequestInit =>
  ({ method: 'POST', headers: { ...(origin === undefined ? {} : { origin }), authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ id, name: 'Fern' }) })
// What the document declares on /plants, so a new operation there changes the expectations too.
const plants = allowedMethods(routesFromDocument(document)).find(({ path }) => path === '/plants')!
const corsHeaders = (res: Response) => [...res.headers.keys()].filter((name) => CORS_HEADERS.test(name))

t.test('an allowed origin: preflight permits the document\'s methods and the two headers; answers carry the origin', async (t) => {
  const base = await serve(t, [APP, 'https://other.example.com'])
  const pre = await fetch(`${base}/plants`, preflight(APP))
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('access-control-allow-origin'), APP, 'the origin itself, not *')
  t.equal(pre.headers.get('access-control-allow-methods'), plants.declared.join(', '))
  t.equal(pre.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, X-Request-Id')
  t.equal(pre.headers.get('access-control-max-age'), '600')
  t.match(pre.headers.get('vary'), /Origin/)

  const ok = await fetch(`${base}/plants`, create(APP, 1))
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('access-control-allow-origin'), APP)
  t.match(ok.headers.get('vary'), /Origin/)
  t.equal(ok.headers.get('access-control-expose-headers'), 'WWW-Authenticate, Retry-After, X-Request-Id, Allow, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Deprecation, Sunset')

  // The answers a browser must be able to read too: a 401, a 409, a 405.
  const denied = await fetch(`${base}/plants`, create(APP, 2, 'not-the-token-0123456789'))
  t.equal(denied.status, 401)
  t.equal(denied.headers.get('access-control-allow-origin'), APP, 'a 401 carries it, so the app can read it')
  const conflict = await fetch(`${base}/plants`, { ...create(APP, 1), body: JSON.stringify({ id: 1, name: 'Ivy' }) })
  t.equal(conflict.status, 409)
  t.equal(conflict.headers.get('access-control-allow-origin'), APP)
  const wrongMethod = await fetch(`${base}/plants`, { method: ['DELETE', 'PATCH', 'PUT'].find((m) => !plants.allowed.includes(m)), headers: { origin: APP } })
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.headers.get('access-control-allow-origin'), APP)
})

t.test('another origin gets no CORS header at all', async (t) => {
  const base = await serve(t, [APP])
  const pre = await fetch(`${base}/plants`, preflight(OTHER))
  t.same(corsHeaders(pre), [], 'the preflight permits nothing')
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('allow'), plants.allowed.join(', '), 'it is a plain OPTIONS')
  const res = await fetch(`${base}/plants`, create(OTHER, 3))
  t.same(corsHeaders(res), [])
  t.equal(res.status, 200, 'the server still answers; the browser withholds it from the page')
  t.same(corsHeaders(await fetch(`${base}/plants`, create(APP.replace('5173', '5174'), 4))), [], 'another port is another origin')
})

t.test('unset (the default): no CORS for anyone', async (t) => {
  const base = await serve(t, [])
  t.same(corsHeaders(await fetch(`${base}/plants`, preflight(APP))), [])
  t.same(corsHeaders(await fetch(`${base}/plants`, create(APP, 5))), [])
})

t.test('* is honoured only when configured: any origin, answered with *', async (t) => {
  const base = await serve(t, ['*'])
  const res = await fetch(`${base}/plants`, create(OTHER, 6))
  t.equal(res.headers.get('access-control-allow-origin'), '*')
  t.equal((await fetch(`${base}/plants`, preflight(OTHER))).headers.get('access-control-allow-methods'), plants.declared.join(', '))
})

t.test('OPTIONS from an allowed origin that is no preflight is a plain OPTIONS', async (t) => {
  const base = await serve(t, [APP])
  const res = await fetch(`${base}/plants`, { method: 'OPTIONS', headers: { origin: APP } })
  t.equal(res.status, 204)
  t.equal(res.headers.get('allow'), plants.allowed.join(', '))
  t.equal(res.headers.get('access-control-allow-methods'), null)
})

t.test('the docs, the document, the probes and unknown paths are unaffected', async (t) => {
  const base = await serve(t, [APP])
  for (const path of ['/docs/', '/docs/json', '/openapi.json', '/openapi.yaml', '/healthz', '/readyz']) {
    const get = await fetch(`${base}${path}`, { headers: { origin: APP } })
    t.equal(get.status, 200, path)
    t.same(corsHeaders(get), [], `${path}: no CORS headers`)
    const pre = await fetch(`${base}${path}`, preflight(APP, 'GET', 'authorization'))
    t.equal(pre.status, 404, `${path}: no preflight answered`)
    t.same(corsHeaders(pre), [])
  }
  const nowhere = await fetch(`${base}/nowhere`, preflight(APP))
  t.equal(nowhere.status, 404)
  t.same(corsHeaders(nowhere), [])
})
