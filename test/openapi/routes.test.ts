import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { bearerGuard } from '../../src/security/auth.js'
import { errorHandler } from '../../src/http/error-handler.js'
import type { Handlers } from '../../src/openapi/handler-types.js'
import { registerRoutes } from '../../src/openapi/register.js'
import { routesFromDocument, standaloneSchema } from '../../src/openapi/routes.js'
import { createValidatorCompiler } from '../../src/openapi/validation.js'
import { TokenSet } from '../../src/security/tokens.js'
import { AUTH, TOKEN } from '../helpers/app.js'

// A document that grows beyond ours: path, query and header parameters, $refs to
// parameters, bodies, responses and recursive schemas, and per-operation security.
const fixture = {
  openapi: '3.1.0',
  info: { title: 'fixture', version: '1' },
  security: [{ bearerAuth: [] }],
  paths: {
    '/trees/{treeId}': {
      parameters: [{ $ref: '#/components/parameters/TreeId' }],
      get: {
        operationId: 'getTree',
        parameters: [
          { name: 'depth', in: 'query', schema: { type: 'integer', minimum: 0 } },
          { name: 'X-Request-Tag', in: 'header', required: true, schema: { type: 'string' } }
        ],
        responses: { 200: { $ref: '#/components/responses/Tree' } }
      }
    },
    '/public': {
      get: { operationId: 'getPublic', security: [], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } } } }
    },
    '/optional-auth': {
      get: { operationId: 'getOptional', security: [{}, { bearerAuth: [] }], responses: { '2XX': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } }
    },
    '/trees': {
      post: {
        operationId: 'plantTree',
        requestBody: { $ref: '#/components/requestBodies/Tree' },
        responses: { 200: { $ref: '#/components/responses/Tree' } }
      }
    }
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'Bearer' } },
    parameters: { TreeId: { name: 'treeId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } } },
    requestBodies: { Tree: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree' } } } } },
    responses: { Tree: { description: 'a tree', content: { 'application/json': { schema: { $ref: '#/components/schemas/Tree' } } } } },
    schemas: {
      Tree: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } } }
      }
    }
  }
}

const echo = async (request: any) => ({ status: 200, body: request })
const handlers = {
  getTree: async ({ params, query, headers }: any) => ({ status: 200, body: { name: `${typeof params.treeId}:${params.treeId}/${query.depth}/${headers['x-request-tag']}` } }),
  getPublic: async () => ({ status: 200, body: { ok: true } }),
  getOptional: async () => ({ status: 201, body: {} }),
  plantTree: async ({ body }: any) => ({ status: 200, body: { ...body, secret: 'dropped by the serializer' } })
} as unknown as Handlers

async function fixtureApp (t: any, doc: any = fixture, bound: unknown = handlers): Promise<FastifyInstance> {
  const app = Fastify()
  app.setValidatorCompiler(createValidatorCompiler())
  app.setErrorHandler(errorHandler)
  const guard = await bearerGuard(app, new TokenSet([TOKEN]))
  registerRoutes(app, routesFromDocument(doc), bound as Handlers, doc, { 'http:bearer': guard })
  t.teardown(() => app.close())
  return app
}

t.test('the route list is derived from the document', async (t) => {
  const routes = routesFromDocument(fixture)
  t.same(routes.map((r) => `${r.method} ${r.url} ${r.operationId}`), [
    'GET /trees/:treeId getTree', 'GET /public getPublic', 'GET /optional-auth getOptional', 'POST /trees plantTree'
  ])
  const getTree = routes[0]
  t.same(getTree.schema.params, { type: 'object', properties: { treeId: { type: 'integer', format: 'int64' } }, required: ['treeId'] })
  t.same(getTree.schema.querystring?.required, [])
  t.same(getTree.schema.headers?.required, ['x-request-tag'], 'header names are lowercased')
  t.same(getTree.security, [{ bearerAuth: [] }], 'the document default applies')
  t.same(routes[1].security, [], 'security: [] overrides the default')
  t.ok(routes[2].schema.response['2xx'], 'status ranges use Fastify spelling')
  t.same(routes[3].schema.body?.$defs?.Tree?.properties.children.items, { $ref: '#/$defs/Tree' }, 'recursive $ref is carried along')
})

t.test('standaloneSchema rejects refs it cannot follow', async (t) => {
  t.throws(() => standaloneSchema(fixture, { $ref: 'https://elsewhere.example/schema.json' }), /must point into #\/components\/schemas/)
  t.throws(() => standaloneSchema(fixture, { $ref: '#/components/schemas/Missing' }), /points at nothing/)
})

t.test('path, query and header parameters are validated and coerced', async (t) => {
  const app = await fixtureApp(t)
  const ok = await app.inject({ url: '/trees/9007199254740993?depth=2', headers: { ...AUTH, 'x-request-tag': 'a' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { name: 'bigint:9007199254740993/2/a' }, 'an int64 path parameter arrives exact')
  const small = await app.inject({ url: '/trees/42', headers: { ...AUTH, 'x-request-tag': 'a' } })
  t.same(small.json(), { name: 'number:42/undefined/a' })
  t.equal((await app.inject({ url: '/trees/abc', headers: { ...AUTH, 'x-request-tag': 'a' } })).statusCode, 400)
  t.equal((await app.inject({ url: '/trees/9223372036854775808', headers: { ...AUTH, 'x-request-tag': 'a' } })).statusCode, 400)
  t.equal((await app.inject({ url: '/trees/1?depth=-1', headers: { ...AUTH, 'x-request-tag': 'a' } })).statusCode, 400)
  const noHeader = await app.inject({ url: '/trees/1', headers: AUTH })
  t.equal(noHeader.statusCode, 400)
  t.match(noHeader.json().message, /headers must have required property 'x-request-tag'/)
})

t.test('per-operation security overrides', async (t) => {
  const app = await fixtureApp(t)
  t.equal((await app.inject({ url: '/public' })).statusCode, 200, 'security: [] is public')
  t.equal((await app.inject({ url: '/optional-auth' })).statusCode, 201, 'an empty alternative is public')
  t.equal((await app.inject({ url: '/trees/1', headers: { 'x-request-tag': 'a' } })).statusCode, 401, 'the default guards the rest')
})

t.test('bodies via $ref are validated and answers serialized through the schema', async (t) => {
  const app = await fixtureApp(t)
  const res = await app.inject({ method: 'POST', url: '/trees', headers: AUTH, payload: { name: 'oak', children: [{ name: 'acorn' }] } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { name: 'oak', children: [{ name: 'acorn' }] }, 'undeclared properties are not serialized')
  const bad = await app.inject({ method: 'POST', url: '/trees', headers: AUTH, payload: { name: 'oak', children: [{}] } })
  t.match(bad.json().message, /body\/children\/0 must have required property 'name'/)
})

t.test('the app refuses to start on a handler mismatch', async (t) => {
  const { getTree, ...missing } = handlers as any
  await t.rejects(fixtureApp(t, fixture, missing), /no handler for operation\(s\): getTree/)
  await t.rejects(fixtureApp(t, fixture, { ...handlers, deleteTree: echo }), /handler\(s\) for operation\(s\) the document does not declare: deleteTree/)
})

t.test('the app fails closed on security it does not implement', async (t) => {
  const withScheme = (scheme: object, security: object[]) => ({
    ...fixture,
    paths: { '/public': { get: { ...fixture.paths['/public'].get, security } } },
    components: { ...fixture.components, securitySchemes: { ...fixture.components.securitySchemes, other: scheme } }
  })
  const only = { getPublic: (handlers as any).getPublic }
  await t.rejects(fixtureApp(t, withScheme({ type: 'apiKey', in: 'header', name: 'X-Key' }, [{ other: [] }]), only), /requires security scheme "other" \(apiKey\), which this service does not implement/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'http', scheme: 'basic' }, [{ bearerAuth: [], other: [] }]), only), /\(http:basic\)/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'oauth2', flows: {} }, [{ bearerAuth: [] }, { other: [] }]), only), /\(oauth2\)/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'http', scheme: 'bearer' }, [{ nowhere: [] }]), only), /"nowhere", which components.securitySchemes does not define/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'http', scheme: 'bearer' }, [{ bearerAuth: ['trees:read'] }, { bearerAuth: ['trees:admin'] }]), only), /alternative security requirements \(http:bearer \[trees:read\] \| http:bearer \[trees:admin\]\)/, 'alternatives that differ in scopes too')
  await t.resolves(fixtureApp(t, withScheme({ type: 'http', scheme: 'bearer' }, [{ bearerAuth: ['trees:read', 'trees:read'] }, { bearerAuth: ['trees:read'] }]), only), 'the same requirement twice is one')
})

t.test('the document must stay within what the router supports', async (t) => {
  t.throws(() => routesFromDocument({ ...fixture, openapi: '3.0.3' }), /only OpenAPI 3.1 documents are supported, got 3.0.3/)
  t.throws(() => routesFromDocument({ ...fixture, jsonSchemaDialect: 'http://json-schema.org/draft-07/schema#' }), /jsonSchemaDialect http:\/\/json-schema.org\/draft-07\/schema# is not supported/)
  t.doesNotThrow(() => routesFromDocument({ ...fixture, jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema' }))
  const op = (extra: object) => ({ ...fixture, paths: { '/x': { post: { operationId: 'x', responses: {}, ...extra } } } })
  t.throws(() => routesFromDocument({ ...fixture, paths: { '/x': { get: { responses: {} } } } }), /GET \/x has no operationId/)
  t.throws(() => routesFromDocument(op({ requestBody: { required: true, content: { 'text/plain': { schema: {} } } } })), /only an application\/json request body/)
  t.throws(() => routesFromDocument(op({ requestBody: { content: { 'application/json': { schema: {} } } } })), /optional request bodies/)
  t.throws(() => routesFromDocument(op({ parameters: [{ name: 'c', in: 'cookie', schema: {} }] })), /cookie parameters/)
  t.throws(() => routesFromDocument(op({ parameters: [{ $ref: '#/components/parameters/Nope' }] })), /points at nothing/)
})
