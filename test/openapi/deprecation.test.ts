import { dump } from 'js-yaml'
import t from 'tap'
import { routesFromDocument } from '../../src/openapi/routes/routes.ts'
import { AUTH, buildTestApp, document, dropPlantsTable, exampleUrl, post, testConfig } from '../helpers/app.ts'

// A deprecated operation says so on every answer, as the document says it: RFC 9745's
// Deprecation (since x-deprecated-at) and RFC 8594's Sunset (x-sunset).

/** The service's own document with its first operation deprecated as `edit` says. */
function deprecatedVariant (edit: Record<string, unknown>) {
  const variant = structuredClone(document)
  const [route] = routesFromDocument(document)
  Object.assign(variant.paths[route.path][route.method.toLowerCase()], edit)
  return { route, loaded: { text: dump(variant), document: variant } }
}

t.test('deprecated: true alone, one line: every answer says Deprecation, with no day claimed', async (t) => {
  const { route, loaded } = deprecatedVariant({ deprecated: true })
  const app = await buildTestApp(t, await testConfig(t), { loaded })
  const refused = await app.inject({ method: route.method as any, url: exampleUrl(route.path) })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers.deprecation, '@0', 'a date in the past: deprecated')
  t.equal(refused.headers.sunset, undefined, 'no x-sunset, no Sunset')
})

t.test('with x-deprecated-at and x-sunset: Deprecation and Sunset on every answer, 2xx, 4xx and 5xx', async (t) => {
  const { route, loaded } = deprecatedVariant({ deprecated: true, 'x-deprecated-at': '2026-07-01T00:00:00Z', 'x-sunset': '2027-06-30' })
  const config = await testConfig(t)
  const app = await buildTestApp(t, config, { loaded })
  const expected = { deprecation: `@${Date.UTC(2026, 6, 1) / 1000}`, sunset: 'Wed, 30 Jun 2027 00:00:00 GMT' }
  const answers = {
    401: await app.inject({ method: route.method as any, url: exampleUrl(route.path) }),
    200: await post(app, { id: 1, name: 'Fern' }),
    400: await post(app, { id: 'one' }),
    409: await post(app, { id: 1, name: 'Ivy' }),
    415: await post(app, '{}', { ...AUTH, 'content-type': 'text/plain' })
  }
  for (const [status, res] of Object.entries(answers)) {
    t.equal(res.statusCode, Number(status))
    t.match(res.headers, expected, `the ${status} carries Deprecation (x-deprecated-at's Unix seconds) and Sunset (x-sunset as an HTTP-date)`)
  }
  await dropPlantsTable(config.store.databaseUrl)
  const failed = await post(app, { id: 2, name: 'Fern' })
  t.equal(failed.statusCode, 500)
  t.match(failed.headers, expected, 'and a 5xx')
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
    [{ deprecated: true, 'x-deprecated-at': 'soon' }, /x-deprecated-at must be a date .*got "soon"/],
    [{ deprecated: true, 'x-deprecated-at': '2027-01-01', 'x-sunset': '2026-01-01' }, /x-sunset comes before x-deprecated-at/],
    [{ 'x-sunset': '2027-01-01' }, /has x-sunset but is not deprecated/]
  ]
  for (const [edit, message] of cases) {
    const { route, loaded } = deprecatedVariant(edit)
    const failed = await buildTestApp(t, await testConfig(t), { loaded }).then(() => undefined, (err: Error) => err.message)
    t.match(failed, message)
    t.ok(failed?.startsWith(`openapi.yaml${route.pointer}: ${route.method} ${route.path}`), `naming the file, where, and ${route.method} ${route.path}: ${failed}`)
  }
})
