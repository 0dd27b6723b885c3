import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { bearerGuard } from '../../src/security/auth.ts'
import { errorHandler, plainError } from '../../src/http/error-handler.ts'
import { registerRoutes } from '../../src/openapi/routes/register.ts'
import { routeList, routesFromDocument, standaloneSchema } from '../../src/openapi/routes/routes.ts'
import { bodyParsers } from '../../src/openapi/requests/bodies.ts'
import { lazySerializerCompiler } from '../../src/openapi/answers/serialization.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { TokenSet } from '../../src/security/tokens.ts'
import { AUTH, TOKEN } from '../helpers/app.ts'

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
}

async function fixtureApp (t: any, doc: any = fixture, bound: object = handlers): Promise<FastifyInstance> {
  const app = Fastify()
  app.setSerializerCompiler(lazySerializerCompiler)
  app.setErrorHandler(errorHandler(() => plainError))
  const routes = routesFromDocument(doc)
  bodyParsers(app, routes, () => undefined)
  const guard = await bearerGuard(app, new TokenSet([TOKEN]))
  registerRoutes(app, routes, doc, {
    handlers: bound,
    checks: { 'http:bearer': (_scheme, scopes) => guard(scopes) },
    validators: createValidators(doc),
    validateResponses: false,
    limits: { bodyBytes: 1024 * 1024, partBytes: 1024 * 1024, parts: 1000 },
    errorWriter: () => plainError,
    file: 'fixture.yaml'
  })
  t.teardown(() => app.close())
  return app
}

t.test('the route list is derived from the document', async (t) => {
  const routes = routesFromDocument(fixture)
  t.same(routes.map((r) => `${r.method} ${r.url} ${r.operationId}`), [
    'GET /trees/:p0 getTree', 'GET /public getPublic', 'GET /optional-auth getOptional', 'POST /trees plantTree'
  ])
  const getTree = routes[0]
  t.same(getTree.pathNames, { p0: 'treeId' }, 'the router\'s parameter names the document\'s')
  t.same(getTree.parameters.map((p) => `${p.in} ${p.name} ${p.required} ${p.style} ${p.explode}`), ['path treeId true simple false', 'query depth false form true', 'header x-request-tag true simple false'], 'header names are lowercased; styles default by location')
  t.same(getTree.security, [{ bearerAuth: [] }], 'the document default applies')
  t.same(routes[1].security, [], 'security: [] overrides the default')
  t.same(routes[2].responses.map((r) => r.status), ['2XX'], 'status ranges as the document writes them')
  t.same(routes[3].body?.media.map((m) => m.type), ['application/json'])
  t.same(standaloneSchema(fixture, routes[3].body!.media[0].schema!).$defs?.Tree?.properties.children.items, { $ref: '#/$defs/Tree' }, 'recursive $ref is carried along')
})

t.test('standaloneSchema refuses refs it cannot follow', async (t) => {
  t.throws(() => standaloneSchema(fixture, { $ref: 'https://elsewhere.example/schema.json' }), /has a \$ref out of the document/)
  t.throws(() => standaloneSchema(fixture, { $ref: '#/components/schemas/Missing' }), /#\/components\/schemas\/Missing: is the target of a \$ref, and there is nothing there/)
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

t.test('the app fails closed on security no check is bound to', async (t) => {
  const withScheme = (scheme: object, security: object[]) => ({
    ...fixture,
    paths: { '/public': { get: { ...fixture.paths['/public'].get, security } } },
    components: { ...fixture.components, securitySchemes: { ...fixture.components.securitySchemes, other: scheme } }
  })
  const only = { getPublic: handlers.getPublic }
  await t.rejects(fixtureApp(t, withScheme({ type: 'apiKey', in: 'header', name: 'X-Key' }, [{ other: [] }]), only), /requires security scheme "other" \(apiKey\), which no check in this service is bound to/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'http', scheme: 'basic' }, [{ bearerAuth: [], other: [] }]), only), /\(http:basic\)/)
  await t.rejects(fixtureApp(t, withScheme({ type: 'oauth2', flows: {} }, [{ bearerAuth: [] }, { other: [] }]), only), /\(oauth2\)/, 'an alternative no check takes fails too')
  await t.rejects(fixtureApp(t, withScheme({ type: 'http', scheme: 'bearer' }, [{ nowhere: [] }]), only), /"nowhere", which components.securitySchemes does not define/)
  await t.resolves(fixtureApp(t, withScheme({ type: 'http', scheme: 'bearer' }, [{ bearerAuth: ['trees:read'] }, { other: ['trees:admin'] }]), only), 'alternatives of bound schemes, each with its scopes')
})

t.test('what the router cannot serve is refused, naming the file, the place and why', async (t) => {
  const op = (extra: object) => ({ ...fixture, paths: { '/x': { post: { operationId: 'x', responses: {}, ...extra } } } })
  const refused = (doc: any) => routeList(doc).refused.map((r) => `${r.pointer} ${r.problem}`)
  t.same(refused({ ...fixture, paths: { '/#X-Amz-Target=Get': { post: { responses: {} } } } }), ['#/paths/~1#X-Amz-Target=Get/post POST /#X-Amz-Target=Get has a path that no request can have: a fragment (#), a query (?), a wildcard (*) or a space is none of a path'])
  t.same(refused({ ...fixture, paths: { '/a/{id}': { get: { responses: {} } } } }), ['#/paths/~1a~1{id}/get GET /a/{id} has {id} in its path, with no path parameter to say what it is'])
  t.same(refused(op({ parameters: [{ $ref: '#/components/parameters/Nope' }] })), ['#/paths/~1x/post/parameters/0 POST /x has a $ref to #/components/parameters/Nope, and there is nothing there'])
  t.same(refused(op({ parameters: [{ name: 'q', in: 'query', style: 'matrix' }] })), ['#/paths/~1x/post/parameters/0 POST /x is parameter q with style matrix, which a query parameter cannot have (form, spaceDelimited, pipeDelimited, deepObject)'])
  t.same(refused({ ...fixture, paths: { '/a': { get: { operationId: 'same', responses: {} } }, '/b': { get: { operationId: 'same', responses: {} } } } }), ['#/paths/~1b/get GET /b has the operationId same, which another operation has'])
  t.same(refused({ ...fixture, paths: { '/a/{x}': { get: { parameters: [{ name: 'x', in: 'path', required: true }], responses: {} } }, '/a/{y}': { get: { parameters: [{ name: 'y', in: 'path', required: true }], responses: {} } } } }), ['#/paths/~1a~1{y}/get GET /a/{y} matches the same requests as another operation (GET /a/:p0)'])
  t.throws(() => routesFromDocument(op({ parameters: [{ $ref: '#/components/parameters/Nope' }] })), /^openapi\.yaml#\/paths\/~1x\/post\/parameters\/0: POST \/x has a \$ref/, 'the service stops on the first, naming file and pointer')
  t.same(routesFromDocument({ ...fixture, paths: { '/x': { get: { responses: {} } } } }).map((r) => r.operationId), ['getX'], 'an operation without an operationId is named from its method and path')
  const named = routesFromDocument({ ...fixture, paths: { '/users/{user-id}/repos': { get: { parameters: [{ name: 'user-id', in: 'path', required: true }], responses: {} } }, '/': { get: { responses: {} } }, '/users': { get: { responses: {} } }, '/users/~': { get: { responses: {} }, post: { operationId: 'getUsers3', responses: {} } } } })
  t.same(named.map((r) => r.operationId), ['getUsersByUserIdRepos', 'get', 'getUsers', 'getUsers2', 'getUsers3'], 'a name another operation has: the next free number (its own names taken first)')
})
