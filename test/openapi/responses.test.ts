import t from 'tap'
import { captureLog } from '../helpers/app.ts'
import { engineApp } from '../helpers/engine.ts'

// Answers as the document says them: the media type the client's Accept prefers among those an
// answer declares (406 when it takes none of them, before the handler runs, where the operation
// declares a 406, 4XX or default answer; else the declared type, Accept disregarded); a status's own
// Response Object, else its range's, else default; writeOnly properties never sent; errors in the
// shape the document declares for their status, or problem details. In response validation, an
// answer that breaks the document fails with a 500 that names the operation and the property.

const thing = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' }, secret: { type: 'string', writeOnly: true } } }
const error = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } }
const document = {
  openapi: '3.1.0',
  info: { title: 'Answers', version: '1.0.0' },
  paths: {
    '/things': {
      post: {
        operationId: 'createThing',
        requestBody: { required: true, content: { 'application/json': { schema: thing } } },
        responses: {
          '2XX': { description: 'stored', headers: { 'X-Count': { required: true, schema: { type: 'integer' } } }, content: { 'application/json': { schema: thing }, 'text/csv': { schema: { type: 'string' } } } },
          400: { description: 'bad', content: { 'application/json': { schema: error } } },
          default: { description: 'anything else', content: { 'application/json': { schema: { type: 'object', required: ['trace'], properties: { trace: { type: 'string' } } } } } }
        }
      }
    },
    '/broken': { get: { operationId: 'broken', responses: { 200: { description: 'a thing', content: { 'application/json': { schema: thing } } } } } },
    '/undeclared': { get: { operationId: 'undeclared', responses: { 200: { description: 'ok' } } } },
    '/no406': { get: { operationId: 'no406', responses: { 200: { description: 'a thing', content: { 'application/json': { schema: thing } } } } } }
  }
}

const handlers = {
  createThing: async ({ body, headers }: any) => headers.accept === 'text/csv'
    ? { status: 201, body: `id,name\n1,${body.name}\n`, headers: { 'x-count': 1 }, contentType: 'text/csv' }
    : { status: 201, body: { id: 1, ...body }, headers: { 'x-count': 1 } },
  broken: async () => ({ status: 200, body: { id: 'one', name: 'x' } }),
  undeclared: async () => ({ status: 418 }),
  no406: async () => ({ status: 200, body: { id: 1, name: 'a' } })
}

const post = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST' as const, url: '/things', payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } })

t.test('negotiated, a range\'s Response Object, writeOnly never sent, readOnly not asked for', async (t) => {
  const app = await engineApp(t, document, handlers)
  const json = await app.inject(post({ name: 'a', secret: 's' }, { accept: 'application/json' }))
  t.equal(json.statusCode, 201, '201, declared by 2XX')
  t.same(json.json(), { id: 1, name: 'a' }, 'the handler\'s secret (writeOnly) is not sent; id (readOnly) was not asked for')
  t.equal(json.headers['x-count'], '1')
  const csv = await app.inject(post({ name: 'a' }, { accept: 'text/csv' }))
  t.equal(csv.headers['content-type'], 'text/csv', 'the media type the client accepts')
  t.equal(csv.body, 'id,name\n1,a\n')
  const none = await app.inject(post({ name: 'a' }, { accept: 'image/png' }))
  t.equal(none.statusCode, 406, 'an Accept no answer fits: 406, before the handler')
  t.same(none.json(), { trace: 'string' }, 'in the shape its default answer declares, which takes no message')
  t.equal((await app.inject(post({ name: 'a' }, { accept: 'text/*;q=0.5, application/json' }))).headers['content-type'], 'application/json; charset=utf-8', 'the client\'s preference')
  const disregarded = await app.inject({ url: '/no406', headers: { accept: 'image/png' } })
  t.equal(disregarded.statusCode, 200, 'an operation that declares no 406 (nor 4XX, nor default) disregards an Accept nothing fits, as RFC 9110 allows')
  t.equal(disregarded.headers['content-type'], 'application/json; charset=utf-8', 'and answers its declared type')
})

t.test('a media type declared with parameters: an Accept that names them is served, and the answer says them', async (t) => {
  // As Open Banking's and The SMS Works' documents declare their JSON.
  const declared = {
    openapi: '3.0.3',
    info: { title: 'Charsets', version: '1.0.0' },
    paths: {
      '/one': { get: { operationId: 'one', responses: { 200: { description: 'a thing', content: { 'application/json; charset=utf-8': { schema: thing } } }, default: { description: 'error', content: { 'application/json; charset=utf-8': { schema: error } } } } } },
      '/two': { get: { operationId: 'two', responses: { 200: { description: 'a thing', content: { 'application/json;charset=UTF-8': { schema: thing }, 'text/plain; charset=us-ascii': { schema: { type: 'string' } } } }, default: { description: 'error' } } } }
    }
  }
  const app = await engineApp(t, declared, { one: async () => ({ status: 200, body: { id: 1, name: 'a' } }), two: async ({ headers }: any) => /text/.test(headers.accept) ? { status: 200, body: 'a', contentType: 'text/plain' } : { status: 200, body: { id: 1, name: 'a' } } })
  for (const accept of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json', 'application/*', '*/*']) {
    const one = await app.inject({ url: '/one', headers: { accept } })
    t.equal(one.statusCode, 200, `Accept: ${accept} is served`)
    t.equal(one.headers['content-type'], 'application/json; charset=utf-8', 'in the type the document declares')
  }
  const other = await app.inject({ url: '/one', headers: { accept: 'application/json; charset=iso-8859-1' } })
  t.equal(other.statusCode, 406, 'a charset the document does not declare is not')
  t.same(other.json(), { code: 406, message: other.json().message }, 'in the declared error shape')
  const json = await app.inject({ url: '/two', headers: { accept: 'application/json;charset=utf-8' } })
  t.equal(json.statusCode, 200)
  t.equal(json.headers['content-type'], 'application/json; charset=UTF-8', 'the parameters as the document writes them')
  const text = await app.inject({ url: '/two', headers: { accept: 'text/plain; charset=US-ASCII' } })
  t.equal(text.headers['content-type'], 'text/plain; charset=us-ascii', 'and a handler that names the bare type is answered in the declared one')
  t.equal(text.body, 'a')
})

t.test('errors in the declared shape for their status, whatever it is; problem details where none is declared', async (t) => {
  const app = await engineApp(t, document, handlers)
  const bad = await app.inject(post({ id: 1 }))
  t.equal(bad.statusCode, 400)
  t.same(bad.json(), { code: 400, message: 'body must have required property \'name\'' }, '400: the document\'s error, filled in')
  const unsupported = await app.inject({ ...post({ name: 'a' }), headers: { 'content-type': 'text/plain' } })
  t.equal(unsupported.statusCode, 415)
  t.equal(unsupported.headers['content-type'], 'application/json; charset=utf-8', '415 falls to default: its media type')
  t.same(unsupported.json(), { trace: 'string' }, 'and a value of its schema, which takes no message')

  const refusals = {
    openapi: '3.1.0',
    info: { title: 'Refusals', version: '1.0.0' },
    paths: Object.fromEntries(Object.entries({
      text: { 'text/plain': { schema: { type: 'string' } } },
      legacy: { 'text/json': { schema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } } },
      example: { 'application/json': { schema: { type: 'object', required: ['why'], properties: { why: { type: 'string' } } }, example: { why: 'no good' } } },
      xml: { 'application/xml': { example: '<refused/>' } },
      problems: { 'application/*+json': {} },
      schemaless: { 'application/json': {} },
      vendor: { 'application/vnd.goa.error': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, example: { id: 'bad_request' } } },
      word: { 'application/json': { schema: { type: 'string', enum: ['bad'] } } },
      bytes: { 'application/octet-stream': { schema: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } } },
      multipart: { 'multipart/form-data': {} },
      form: { 'application/x-www-form-urlencoded': {} },
      bare: undefined
    }).map(([name, content]) => [`/${name}`, { get: { operationId: name, parameters: [{ name: 'n', in: 'query', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'ok' }, 400: { description: 'refused', ...(content !== undefined && { content }) } } } }]))
  }
  const refusing = await engineApp(t, refusals, Object.fromEntries(['text', 'legacy', 'example', 'xml', 'problems', 'schemaless', 'vendor', 'word', 'bytes', 'multipart', 'form', 'bare'].map((name) => [name, async () => ({ status: 200 })])))
  const refused = async (name: string) => await refusing.inject({ url: `/${name}?n=x` })
  const text = await refused('text')
  t.same([text.statusCode, text.headers['content-type'], text.body], [400, 'text/plain; charset=utf-8', 'querystring/n must be integer'], 'a text type: the message, as text')
  const legacy = await refused('legacy')
  t.same([legacy.headers['content-type'], legacy.json()], ['text/json; charset=utf-8', { message: 'querystring/n must be integer' }], 'text/json, JSON by an older name: the document\'s error, filled in, not text')
  const example = await refused('example')
  t.same([example.headers['content-type'], example.json()], ['application/json; charset=utf-8', { why: 'no good' }], 'a schema that takes no message: the document\'s example of the answer')
  const xml = await refused('xml')
  t.same([xml.headers['content-type'], xml.body], ['application/xml', '<refused/>'], 'XML: the example')
  const problems = await refused('problems')
  t.equal(problems.headers['content-type'], 'application/problem+json; charset=utf-8', 'a range that takes problem details: problem details')
  const schemaless = await refused('schemaless')
  t.same([schemaless.headers['content-type'], schemaless.json().detail], ['application/json; charset=utf-8', 'querystring/n must be integer'], 'JSON of no schema (any JSON): problem details, in the type declared')
  const vendor = await refused('vendor')
  t.same([vendor.statusCode, vendor.headers['content-type'], vendor.body], [400, 'application/vnd.goa.error', '{"id":"bad_request"}'], 'an object in a vendor type (Goa\'s errors): its example, as JSON text')
  const word = await refused('word')
  t.same([word.headers['content-type'], word.body], ['application/json; charset=utf-8', '"bad"'], 'a JSON string: a value of its schema, in JSON')
  const bytes = await refused('bytes')
  t.equal(bytes.headers['content-type'], 'application/octet-stream', 'bytes (as Azure\'s documents declare their errors): in that type')
  t.equal(bytes.body, 'querystring/n must be integer', 'the message, as bytes')
  const multipart = await refused('multipart')
  const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(String(multipart.headers['content-type']))?.[1]
  t.ok(boundary, 'a multipart form (as xtrf declares its every answer): in that type, with its boundary')
  t.equal(multipart.body, `--${boundary}\r\nContent-Disposition: form-data; name="message"\r\n\r\nquerystring/n must be integer\r\n--${boundary}--\r\n`, 'the message, its one part')
  const form = await refused('form')
  t.same([form.headers['content-type'], form.body], ['application/x-www-form-urlencoded', 'message=querystring%2Fn+must+be+integer'], 'a urlencoded form: the message, its one field')
  const bare = await refused('bare')
  t.equal(bare.json().detail, 'querystring/n must be integer', 'no content declared: problem details')
})

t.test('response validation: an answer that breaks the document fails loudly, naming the operation and where', async (t) => {
  const { logStream, lines } = captureLog()
  const app = await engineApp(t, document, handlers, { logStream })
  const broken = await app.inject({ url: '/broken' })
  t.equal(broken.statusCode, 500)
  t.notMatch(broken.body, /broken|must be integer/, 'nothing of it reaches the client')
  const logged = lines.find((line) => line.err?.code === 'OPENAPI_RESPONSE_INVALID')
  t.equal(logged?.err.message, 'The answer of broken breaks the document: status 200, body/id must be integer', 'the log names the operation and the property')
  t.equal((await app.inject({ url: '/undeclared' })).statusCode, 500, 'a status the operation does not declare')
  t.ok(lines.some((line) => line.err?.message === 'The answer of undeclared breaks the document: status 418, which the document does not declare'), 'named in the log')
  const off = await engineApp(t, document, handlers, { env: { VALIDATE_RESPONSES: 'false' } })
  t.equal((await off.inject({ url: '/undeclared' })).statusCode, 418, 'off (production\'s default), the answer is sent as the handler gives it')
})

t.test('an answer whose schema is too tangled for fast-json-stringify to compile (shared references every way, as Stripe\'s expandable objects): written at once, with what the schema declares and nothing more', async (t) => {
  // Ten schemas, each with a member that is any other one or its id: millions of paths through them.
  const names = Array.from({ length: 10 }, (_, i) => `node${i}`)
  const member = (name: string) => ({ anyOf: [{ type: 'string' }, { $ref: `#/components/schemas/${name}` }] })
  const schemas = Object.fromEntries(names.map((name) => [name, {
    type: 'object', required: ['id'], properties: { id: { type: 'string' }, secret: { type: 'string', writeOnly: true }, tags: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' } } } }, ...Object.fromEntries(names.map((other) => [other, member(other)])) }
  }]))
  const tangled = {
    openapi: '3.1.0',
    info: { title: 'Tangled', version: '1.0.0' },
    components: { schemas },
    paths: { '/nodes/{id}': { get: { operationId: 'getNode', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'a node', content: { 'application/json': { schema: { $ref: '#/components/schemas/node0' } } } } } } } }
  }
  const node = { id: 'n0', secret: 'hunter2', internal: 'not for clients', tags: [{ label: 'a', colour: 'red' }], node1: { id: 'n1', secret: 'x', node2: 'n2', internal: 1, ['__proto__']: 'p' }, node3: 'n3' }
  const app = await engineApp(t, tangled as any, { getNode: async () => ({ status: 200, body: node }) }, { env: { VALIDATE_RESPONSES: 'false' } })
  const res = await app.inject({ url: '/nodes/n0' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '{"id":"n0","tags":[{"label":"a"}],"node1":{"id":"n1","node2":"n2"},"node3":"n3"}', 'its declared members, at every depth; never a writeOnly one, nor one the schema does not declare')
})
