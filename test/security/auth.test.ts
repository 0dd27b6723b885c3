import t from 'tap'
import { routesFromDocument } from '../../src/openapi/routes/routes.ts'
import { assertError, buildTestApp, captureLog, document, testConfig, TOKEN } from '../helpers/app.ts'

// Driven by the document: every operation that requires security is checked.
const guarded = routesFromDocument(document).filter((route) => route.security.length > 0)

t.ok(guarded.length > 0, 'the document has guarded operations')

for (const route of guarded) {
  const url = route.url.replace(/:(\w+)/g, '1')
  const send = (app: Awaited<ReturnType<typeof buildTestApp>>, authorization?: string) => app.inject({
    method: route.method as any,
    url,
    // A body that would fail validation: the 401 must come first.
    headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
    payload: '{"not valid'
  })

  t.test(`${route.method} ${route.url} (${route.operationId})`, async (t) => {
    const app = await buildTestApp(t)

    const missing = await send(app)
    assertError(t, missing, 401, /Missing bearer token/)
    t.equal(missing.headers['www-authenticate'], 'Bearer realm="plants"', 'challenge without error code')

    const wrong = await send(app, 'Bearer not-the-token-at-all-000')
    assertError(t, wrong, 401, /Invalid bearer token/)
    t.equal(wrong.headers['www-authenticate'], 'Bearer realm="plants", error="invalid_token"')

    const scheme = await send(app, `Basic ${TOKEN}`)
    assertError(t, scheme, 401, /Bearer scheme/)
    t.equal(scheme.headers['www-authenticate'], 'Bearer realm="plants"')

    const empty = await send(app, 'Bearer ')
    assertError(t, empty, 401)

    const prefix = await send(app, `Bearer ${TOKEN.slice(0, -1)}`)
    assertError(t, prefix, 401, /Invalid bearer token/)

    for (const word of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const res = await send(app, `${word} ${TOKEN}`)
      t.not(res.statusCode, 401, `scheme word "${word}" is accepted (RFC 7235: case-insensitive)`)
    }
  })
}

t.test('several tokens are each accepted', async (t) => {
  const other = 'second-token-abcdefghijklmnop'
  const app = await buildTestApp(t, await testConfig(t, { API_TOKENS: `${TOKEN},${other}` }))
  for (const token of [TOKEN, other]) {
    const res = await app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { id: 1, name: 'Fern' } })
    t.equal(res.statusCode, 200)
  }
})

t.test('docs, the document and the probes are public', async (t) => {
  const app = await buildTestApp(t)
  for (const url of ['/docs/', '/docs/json', '/openapi.yaml', '/openapi.json', '/healthz', '/readyz']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, `${url} answers without a token`)
  }
})

t.test('tokens never reach the logs', async (t) => {
  const { logStream, lines, raw } = captureLog()
  const app = await buildTestApp(t, await testConfig(t, { LOG_LEVEL: 'trace' }), { logStream })
  const wrong = 'a-wrong-token-that-must-not-be-logged'
  for (const authorization of [`Bearer ${TOKEN}`, `Bearer ${wrong}`, `Basic ${wrong}`]) {
    await app.inject({ method: 'POST', url: '/plants', headers: { authorization, 'content-type': 'application/json' }, payload: { id: 1, name: 'Fern' } })
  }
  t.equal(lines.filter((line) => line.msg === 'request').length, 3, 'each request was logged, at trace level')
  t.notMatch(raw.join(''), TOKEN, 'the valid token is not logged')
  t.notMatch(raw.join(''), wrong, 'a rejected token is not logged')
})
