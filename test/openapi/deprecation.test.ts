import { dump } from 'js-yaml'
import t from 'tap'
import { routesFromDocument } from '../../src/openapi/routes.js'
import { buildTestApp, document, exampleUrl, post, testConfig } from '../helpers/app.js'

// A deprecated operation says so on every answer, as the document says it: RFC 9745's
// Deprecation (since x-deprecated-at) and RFC 8594's Sunset (x-sunset).

/** The service's own document with its first operation deprecated as `edit` says. */
function deprecatedVariant (edit: Record<string, unknown>) {
  const variant = structuredClone(document)
  const [route] = routesFromDocument(document)
  Object.assign(variant.paths[route.path][route.method.toLowerCase()], edit)
  return { route, loaded: { text: dump(variant), document: variant } }
}

t.test('a deprecated operation answers Deprecation and Sunset, on a 200 and on a refusal', async (t) => {
  const { route, loaded } = deprecatedVariant({ deprecated: true, 'x-deprecated-at': '2026-07-01T00:00:00Z', 'x-sunset': '2027-06-30' })
  const app = await buildTestApp(t, await testConfig(t), { loaded })
  const refused = await app.inject({ method: route.method as any, url: exampleUrl(route.path) })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers.deprecation, `@${Date.UTC(2026, 6, 1) / 1000}`, 'Deprecation: @ and the Unix seconds of x-deprecated-at')
  t.equal(refused.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', 'Sunset: x-sunset as an HTTP-date')
  const created = await post(app, { id: 1, name: 'Fern' })
  t.equal(created.statusCode, 200)
  t.equal(created.headers.deprecation, refused.headers.deprecation)
  t.equal(created.headers.sunset, refused.headers.sunset)
  const notFound = await app.inject({ method: 'GET', url: '/nowhere' })
  t.equal(notFound.headers.deprecation, undefined, 'other routes carry neither')
})

t.test('the operations that are not deprecated carry neither header', async (t) => {
  const app = await buildTestApp(t)
  for (const route of routesFromDocument(document)) {
    t.equal(route.deprecation, undefined, `${route.operationId} is not deprecated in openapi.yaml`)
    const res = await app.inject({ method: route.method as any, url: exampleUrl(route.path) })
    t.equal(res.headers.deprecation, undefined)
    t.equal(res.headers.sunset, undefined)
  }
})

t.test('what the document gets wrong stops the start, naming the operation', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ deprecated: true }, /is deprecated: say since when in x-deprecated-at/],
    [{ deprecated: true, 'x-deprecated-at': 'soon' }, /x-deprecated-at must be a date .*got "soon"/],
    [{ deprecated: true, 'x-deprecated-at': '2027-01-01', 'x-sunset': '2026-01-01' }, /x-sunset comes before x-deprecated-at/],
    [{ 'x-sunset': '2027-01-01' }, /has x-sunset but is not deprecated/]
  ]
  for (const [edit, message] of cases) {
    const { route, loaded } = deprecatedVariant(edit)
    const failed = await buildTestApp(t, await testConfig(t), { loaded }).then(() => undefined, (err: Error) => err.message)
    t.match(failed, message)
    t.ok(failed?.startsWith(`${route.method} ${route.path}`), `naming ${route.method} ${route.path}: ${failed}`)
  }
})
