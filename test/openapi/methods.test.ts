import t from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { allowedMethods } from '../../src/openapi/routes/methods.ts'
import { routesFromDocument } from '../../src/openapi/routes/routes.ts'
import { assertError, buildTestApp, document, exampleUrl } from '../helpers/app.ts'

// A declared path with an undeclared method: 405 with Allow, over real HTTP. The lists come from
// the document, so this test's expectations do too, whatever operations it holds.

const paths = allowedMethods(routesFromDocument(document))
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

t.test('the Allow lists follow the document', async (t) => {
  const one = { openapi: '3.1.0', info: { title: 'One', version: '1.0.0' }, paths: { '/things': { post: { operationId: 'createThing', responses: { 200: { description: 'ok' } } } } } }
  t.same(allowedMethods(routesFromDocument(one)), [{ path: '/things', url: '/things', declared: ['POST'], allowed: ['OPTIONS', 'POST'] }])
  const more = structuredClone(one) as any
  more.paths['/things'].get = { operationId: 'listThings', responses: { 200: { description: 'ok' } } }
  more.paths['/things/{id}'] = { delete: { operationId: 'deleteThing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 204: { description: 'gone' } } } }
  t.same(allowedMethods(routesFromDocument(more)), [
    { path: '/things', url: '/things', declared: ['GET', 'POST'], allowed: ['GET', 'HEAD', 'OPTIONS', 'POST'] },
    { path: '/things/{id}', url: '/things/:p0', declared: ['DELETE'], allowed: ['DELETE', 'OPTIONS'] }
  ], 'a new operation changes Allow by itself; HEAD comes with GET')
  t.ok(paths.length > 0, 'the service\'s document declares paths')
})

t.test('a path that a templated one serves too (GitLab\'s PUT /services/asana beside GET and DELETE /services/{slug}): those methods are served there, not refused', async (t) => {
  const slug = { name: 'slug', in: 'path', required: true, schema: { type: 'string' } }
  const services = { openapi: '3.1.0', info: { title: 'Services', version: '1.0.0' }, paths: { '/services/asana': { put: { responses: { 200: { description: 'set' } } } }, '/services/{slug}': { get: { parameters: [slug], responses: { 200: { description: 'it' } } }, delete: { parameters: [slug], responses: { 204: { description: 'gone' } } } } } }
  t.same(allowedMethods(routesFromDocument(services))[0], { path: '/services/asana', url: '/services/asana', declared: ['DELETE', 'GET', 'PUT'], allowed: ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PUT'] })
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: services }, 'services.json')
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/services/asana' })).statusCode, 200, 'GET: the templated path\'s')
  const post = await app.inject({ method: 'POST', url: '/services/asana' })
  t.same([post.statusCode, post.headers.allow], [405, 'DELETE, GET, HEAD, OPTIONS, PUT'])
})

t.test('405 with Allow and the Error body naming the document\'s path; no token needed, no body read', async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  for (const { path, allowed } of paths) {
    const url = `${base}${exampleUrl(path)}`
    for (const method of METHODS.filter((m) => !allowed.includes(m))) {
      // A body of a type the API refuses: the method is wrong before anything else is.
      const res = await fetch(url, { method, ...(method === 'GET' || method === 'HEAD' ? {} : { body: 'not json', headers: { 'content-type': 'text/plain' } }) })
      t.equal(res.status, 405, `${method} ${path}`)
      t.equal(res.headers.get('allow'), allowed.join(', '))
      if (method !== 'HEAD') {
        const body = await res.json() as any
        assertError(t, { statusCode: res.status, json: () => body }, 405)
        t.equal(body.message, `Method ${method} is not allowed on ${path}; it allows ${allowed.join(', ')}`)
      }
    }
  }
})

t.test('OPTIONS answers 204 with Allow; unknown paths stay 404', async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  for (const { path, allowed } of paths) {
    const options = await fetch(`${base}${exampleUrl(path)}`, { method: 'OPTIONS' })
    t.equal(options.status, 204, path)
    t.equal(options.headers.get('allow'), allowed.join(', '))
    t.equal(await options.text(), '')
    t.equal(options.headers.get('access-control-allow-origin'), null, 'no CORS unless configured')
  }
  for (const method of ['GET', 'OPTIONS', 'POST']) {
    for (const path of ['/nowhere', `${exampleUrl(paths[0].path)}/below/a/declared/path`]) {
      const res = await fetch(`${base}${path}`, { method })
      const body = await res.json()
      assertError(t, { statusCode: res.status, json: () => body }, 404)
      t.equal(res.headers.get('allow'), null)
    }
  }
})

t.test('the declared methods are untouched: they answer 401 without a token, with no Allow', async (t) => {
  const app = await buildTestApp(t)
  for (const route of routesFromDocument(document).filter((r) => r.security.length > 0)) {
    const res = await app.inject({ method: route.method as any, url: exampleUrl(route.path), payload: route.body === undefined ? undefined : '{}', headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 401, `${route.method} ${route.path}`)
    t.equal(res.headers.allow, undefined)
  }
})
