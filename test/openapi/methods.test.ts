import t from 'tap'
import { allowedMethods } from '../../src/openapi/methods.js'
import { routesFromDocument } from '../../src/openapi/routes.js'
import { assertError, buildTestApp, document } from '../helpers/app.js'

// A declared path with an undeclared method: 405 with Allow, over real HTTP. The lists come from
// the document, so this test does too.

const allowed = allowedMethods(routesFromDocument(document))

t.test('the Allow lists follow the document', async (t) => {
  t.same(Object.fromEntries(allowed), { '/plants': ['OPTIONS', 'POST'] })
  const withGet = structuredClone(document)
  withGet.paths['/plants'].get = { operationId: 'listPlants', responses: { 200: { description: 'ok' } } }
  withGet.paths['/plants/{id}'] = { delete: { operationId: 'deletePlant', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 204: { description: 'gone' } } } }
  t.same(Object.fromEntries(allowedMethods(routesFromDocument(withGet))), {
    '/plants': ['GET', 'HEAD', 'OPTIONS', 'POST'],
    '/plants/:id': ['DELETE', 'OPTIONS']
  }, 'a new operation changes Allow by itself; HEAD comes with GET')
})

t.test('405 with Allow and the Error body; no token needed, no body read', async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  for (const [path, methods] of allowed) {
    const url = `${base}${path}`
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD']) {
      // A body of a type the API refuses: the method is wrong before anything else is.
      const res = await fetch(url, { method, ...(method === 'GET' || method === 'HEAD' ? {} : { body: 'not json', headers: { 'content-type': 'text/plain' } }) })
      t.equal(res.status, 405, `${method} ${path}`)
      t.equal(res.headers.get('allow'), methods.join(', '))
      if (method !== 'HEAD') {
        const body = await res.json() as any
        assertError(t, { statusCode: res.status, json: () => body }, 405, new RegExp(`^Method ${method} is not allowed on ${path}; it allows ${methods.join(', ')}$`))
      }
    }
  }
})

t.test('OPTIONS answers 204 with Allow; unknown paths stay 404', async (t) => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const options = await fetch(`${base}/plants`, { method: 'OPTIONS' })
  t.equal(options.status, 204)
  t.equal(options.headers.get('allow'), 'OPTIONS, POST')
  t.equal(await options.text(), '')
  t.equal(options.headers.get('access-control-allow-origin'), null, 'no CORS unless configured')

  for (const method of ['GET', 'OPTIONS', 'POST']) {
    const res = await fetch(`${base}/nowhere`, { method })
    const body = await res.json()
    assertError(t, { statusCode: res.status, json: () => body }, 404)
    t.equal(res.headers.get('allow'), null)
  }
  t.equal((await fetch(`${base}/plants/1`)).status, 404, 'a path below a declared one is no declared path')
})

t.test('the declared method is untouched', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'POST', url: '/plants', payload: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(res.statusCode, 401)
  t.equal(res.headers.allow, undefined)
})
