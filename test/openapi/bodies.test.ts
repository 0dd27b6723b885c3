import t from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { httpTransport } from '../../src/openapi/verify/http.ts'
import { verify } from '../../src/openapi/verify/verifier.ts'
import { echo, engineApp } from '../helpers/engine.ts'
import { injectTransport } from '../helpers/inject-transport.ts'

// Request bodies of every common media type, each chosen by Content-Type among those the operation
// declares (ranges included), read as its type says and checked by its schema: JSON and +json,
// forms with their encodings, multipart with files streamed within limits, text, bytes; optional
// bodies; 415 naming what the operation takes. An echo handler shows what the handler is given.

const item = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, count: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } }
const op = (operationId: string, content: Record<string, unknown>, required = true) => ({
  post: { operationId, requestBody: { required, content }, responses: { 200: { description: 'echo' } } }
})

const document = {
  openapi: '3.1.0',
  info: { title: 'Bodies', version: '1.0.0' },
  paths: {
    '/json': op('json', { 'application/json': { schema: item }, 'application/vnd.items+json': { schema: item }, 'application/x-www-form-urlencoded': { schema: item } }),
    '/form': op('form', {
      'application/x-www-form-urlencoded': {
        schema: { type: 'object', properties: { filter: { type: 'object', properties: { size: { type: 'integer' } } }, ids: { type: 'array', items: { type: 'integer' } }, meta: { type: 'object', properties: { a: { type: 'integer' } } } } },
        encoding: { filter: { style: 'deepObject', explode: true }, ids: { explode: false }, meta: { contentType: 'application/json' } }
      }
    }),
    // As Stripe writes its forms: every field deepObject, whatever its shape.
    '/deep': op('deep', {
      'application/x-www-form-urlencoded': {
        schema: { type: 'object', properties: { url: { anyOf: [{ type: 'string' }, { type: 'string', enum: [''] }] }, fee: { anyOf: [{ type: 'integer' }, { type: 'string', enum: [''] }] }, expand: { type: 'array', items: { type: 'string' } }, owner: { type: 'object', properties: { share: { anyOf: [{ type: 'number' }, { type: 'string', enum: [''] }] } } } } },
        encoding: Object.fromEntries(['url', 'fee', 'expand', 'owner'].map((name) => [name, { style: 'deepObject', explode: true }]))
      }
    }),
    '/nested': op('nested', {
      'application/x-www-form-urlencoded': {
        schema: { type: 'object', required: ['images'], properties: { settings: { type: 'object', properties: { methods: { type: 'object', additionalProperties: { type: 'boolean' } } } }, images: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } }, n: { type: 'integer' } } }
      }
    }),
    '/upload': op('upload', {
      'multipart/form-data': {
        schema: { type: 'object', required: ['file', 'title'], properties: { file: { type: 'string', format: 'binary' }, title: { type: 'string', maxLength: 20 }, pages: { type: 'integer' }, meta: { type: 'object', required: ['a'], properties: { a: { type: 'integer' } } } } }
      }
    }),
    '/text': op('text', { 'text/plain': { schema: { type: 'string', maxLength: 5 } } }),
    '/legacy': op('legacy', { 'text/json': { schema: item } }),
    '/suffixed': op('suffixed', { 'image/svg+xml': {}, 'model/vnd.scene+json': { schema: item } }),
    '/bytes': op('bytes', { 'application/octet-stream': {}, 'image/*': {} }),
    '/any': op('any', { '*/*': {} }),
    '/anyItem': op('anyItem', { '*/*': { schema: item } }),
    '/optional': op('optional', { 'application/json': { schema: item } }, false),
    '/strict': op('strict', { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { size: { enum: ['S', 'M', 'L'] } } } } }),
    '/closed': op('closed', { 'application/json': { schema: { allOf: [{ type: 'object', properties: { size: { type: 'string' } } }], unevaluatedProperties: false } } }),
    '/query': { get: { operationId: 'query', requestBody: { required: true, content: { 'application/json': { schema: item } } }, responses: { 200: { description: 'echo' } } } },
    '/bodiless': { delete: { operationId: 'bodiless', responses: { 200: { description: 'echo' } } } }
  }
}
const handlers = Object.fromEntries(['json', 'form', 'deep', 'nested', 'upload', 'text', 'legacy', 'suffixed', 'bytes', 'any', 'anyItem', 'optional', 'strict', 'closed', 'query', 'bodiless'].map((id) => [id, echo]))

function multipart (parts: Array<{ name: string, value: string, filename?: string, type?: string }>): { payload: string, headers: Record<string, string> } {
  const boundary = 'test-boundary-1234'
  const payload = parts.map(({ name, value, filename, type }) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n${type === undefined ? '' : `Content-Type: ${type}\r\n`}\r\n${value}\r\n`).join('') + `--${boundary}--\r\n`
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

t.test('each media type, read and checked as it says', async (t) => {
  const app = await engineApp(t, document, handlers, { env: { PART_LIMIT_BYTES: '1024', BODY_LIMIT_BYTES: '4096' } })
  const post = async (url: string, payload: string | Buffer, type: string) => await app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } })
  const body = async (url: string, payload: string | Buffer, type: string) => {
    const res = await post(url, payload, type)
    t.equal(res.statusCode, 200, `${url} ${type}: ${res.body}`)
    return res.json().body
  }
  t.same(await body('/json', '{"name":"a","count":2}', 'application/json'), { name: 'a', count: 2 }, 'JSON')
  t.same(await body('/json', '{"name":"a"}', 'application/vnd.items+json; charset=utf-8'), { name: 'a' }, 'a +json type')
  t.same(await body('/json', 'name=a&count=2&tags=x&tags=y', 'application/x-www-form-urlencoded'), { name: 'a', count: 2, tags: ['x', 'y'] }, 'the same schema as a form: fields converted')
  t.same(await body('/json', 'name=a&tags=x', 'application/x-www-form-urlencoded'), { name: 'a', tags: ['x'] }, 'a list of one')
  t.same(await body('/form', `filter[size]=3&ids=1,2&meta=${encodeURIComponent('{"a":1}')}`, 'application/x-www-form-urlencoded'), { filter: { size: 3 }, ids: [1, 2], meta: { a: 1 } }, 'a form\'s encodings: deepObject, not exploded, JSON')
  t.strictSame(await body('/deep', 'url=https%3A%2F%2Fexample.com&fee=5&expand[]=lines&owner[share]=12.5', 'application/x-www-form-urlencoded'), { url: 'https://example.com', fee: 5, expand: ['lines'], owner: { share: 12.5 } }, 'deepObject on a field that is no object: spelled as form, as Stripe\'s clients send it')
  t.strictSame(await body('/deep', 'url=&fee=', 'application/x-www-form-urlencoded'), { url: '', fee: '' }, 'and its empty value, Stripe\'s way to unset one')
  t.same(await body('/nested', `settings=${encodeURIComponent('{"methods":{"flip":true}}')}&images=${encodeURIComponent('[{"url":"a"},{"url":"b"}]')}&n=2`, 'application/x-www-form-urlencoded'), { settings: { methods: { flip: true } }, images: [{ url: 'a' }, { url: 'b' }], n: 2 }, 'a structure within a structure, which no style spells: JSON, as Azure\'s documents send it')
  const upload = multipart([{ name: 'title', value: 'Report' }, { name: 'pages', value: '12' }, { name: 'meta', value: '{"a":1}', type: 'application/json' }, { name: 'file', value: 'x'.repeat(600), filename: 'report.pdf', type: 'application/pdf' }])
  t.same(await body('/upload', upload.payload, upload.headers['content-type']), { title: 'Report', pages: 12, meta: { a: 1 }, file: { filename: 'report.pdf', mimetype: 'application/pdf', data: '<600 bytes>' } }, 'multipart: fields converted, a JSON part parsed, the file in bytes')
  t.equal(await body('/text', 'hello', 'text/plain'), 'hello', 'text')
  t.same(await body('/legacy', '{"name":"a"}', 'text/json; charset=utf-8'), { name: 'a' }, 'text/json, JSON by an older name (ASP.NET Web API\'s documents declare it), as JSON')
  t.equal(await body('/suffixed', '<svg/>', 'image/svg+xml'), '<svg/>', 'a +xml type under another top-level type, as text')
  t.same(await body('/suffixed', '{"name":"a"}', 'model/vnd.scene+json'), { name: 'a' }, 'and a +json one, as JSON')
  t.equal(await body('/bytes', Buffer.from([1, 2, 3]), 'application/octet-stream'), '<3 bytes>', 'bytes')
  t.equal(await body('/bytes', Buffer.from([1, 2]), 'image/png'), '<2 bytes>', 'a type in a declared range (image/*)')
  t.equal(await body('/any', Buffer.from([1, 2, 3, 4]), 'application/pdf'), '<4 bytes>', 'any type, where the document takes */*')
  t.same(await body('/any', '{"a":1}', 'application/json'), { a: 1 }, 'JSON too')
  t.equal((await app.inject({ method: 'POST', url: '/optional' })).statusCode, 200, 'an optional body, absent')
  // No content is no body, whatever type it names (a client that sends its Content-Type on every request).
  for (const type of ['application/json', 'text/csv']) {
    for (const [method, url] of [['POST', '/optional'], ['DELETE', '/bodiless']] as const) {
      const res = await app.inject({ method, url, payload: '', headers: { 'content-type': type, 'content-length': '0' } })
      t.equal(res.statusCode, 200, `${method} ${url} in ${type}, no content: taken as no body (${res.body})`)
      // Nor a request with neither Content-Length nor Transfer-Encoding: its body has no length (RFC 9112 §6.3).
      const unsized = await app.inject({ method, url, headers: { 'content-type': type } })
      t.equal(unsized.statusCode, 200, `${method} ${url} in ${type}, no length: taken as no body (${unsized.body})`)
    }
  }
  const query = await app.inject({ method: 'GET', url: '/query', payload: '{"name":"a"}', headers: { 'content-type': 'application/json' } })
  t.same(query.json().body, { name: 'a' }, 'a GET\'s body the document declares is read')
})

t.test('what a body\'s schema or limits refuse: 400, 413, 415', async (t) => {
  const app = await engineApp(t, document, handlers, { env: { PART_LIMIT_BYTES: '1024', BODY_LIMIT_BYTES: '4096' } })
  const refused = async (url: string, payload: string | Buffer, type: string | undefined, status: number, message: RegExp) => {
    const res = await app.inject({ method: 'POST', url, payload, headers: type === undefined ? {} : { 'content-type': type } })
    t.equal(res.statusCode, status, `${url} ${type}: ${res.body}`)
    t.match(res.json().detail, message)
  }
  await refused('/json', '{"count":2}', 'application/json', 400, /^body must have required property 'name'$/)
  await refused('/json', '', 'application/json', 400, /^Request body is empty; send a JSON document$/)
  await refused('/json', '', 'text/csv', 415, /^Unsupported Media Type: text\/csv; send one of/)
  await refused('/json', 'name=a&count=two', 'application/x-www-form-urlencoded', 400, /^body\/count must be integer$/)
  await refused('/json', 'name=a&count=1e999999', 'application/x-www-form-urlencoded', 400, /^body\/count must be a finite number$/)
  await refused('/json', 'name=a&count=9007199254740993', 'application/x-www-form-urlencoded', 400, /^body\/count must be an integer from -9007199254740991 to 9007199254740991/)
  await refused('/json', 'a,b', 'text/csv', 415, /^Unsupported Media Type: text\/csv; send one of application\/json, application\/vnd.items\+json, application\/x-www-form-urlencoded$/)
  await refused('/text', '{}', 'application/json', 415, /^Unsupported Media Type: application\/json; send text\/plain$/)
  await refused('/text', 'too long', 'text/plain', 400, /^body must NOT have more than 5 characters$/)
  await refused('/optional', '{}', 'application/json', 400, /^body must have required property 'name'$/)
  // A range's schema checks a JSON body as JSON, as Kubernetes' documents (*/* for every body) have it: no number taken as its text.
  await refused('/anyItem', '{"name":12345}', 'application/json', 400, /^body\/name must be string$/)
  // What ajv's words leave out, named: the property not allowed, the values allowed.
  await refused('/strict', '{"colour":"red"}', 'application/json', 400, /^body must NOT have additional properties \(colour\)$/)
  await refused('/strict', '{"size":"XL"}', 'application/json', 400, /^body\/size must be equal to one of the allowed values \("S", "M", "L"\)$/)
  await refused('/closed', '{"size":"XL","colour":"red"}', 'application/json', 400, /^body must NOT have unevaluated properties \(colour\)$/)
  const noTitle = multipart([{ name: 'file', value: 'x', filename: 'a.txt' }])
  await refused('/upload', noTitle.payload, noTitle.headers['content-type'], 400, /^body must have required property 'title'$/)
  const badJson = multipart([{ name: 'title', value: 'x' }, { name: 'meta', value: '{"b":1}', type: 'application/json' }, { name: 'file', value: 'x', filename: 'a.txt' }])
  await refused('/upload', badJson.payload, badJson.headers['content-type'], 400, /^body\/meta must have required property 'a'$/)
  const bigPart = multipart([{ name: 'title', value: 'x' }, { name: 'file', value: 'x'.repeat(1500), filename: 'a.bin' }])
  await refused('/upload', bigPart.payload, bigPart.headers['content-type'], 413, /too large/)
  const bigWhole = multipart([{ name: 'title', value: 'x' }, ...[1, 2, 3, 4, 5].map((n) => ({ name: 'file', value: 'x'.repeat(1000), filename: `${n}.bin` }))])
  await refused('/upload', bigWhole.payload, bigWhole.headers['content-type'], 413, /too large/)
  await refused('/upload', 'not multipart', 'multipart/form-data', 400, /not valid multipart\/form-data/)
})

t.test('parts and fields are counted: past MAX_PARTS, 413, the rest unread', async (t) => {
  // No shedding: a body of 200,000 fields may hold a loaded machine's event loop past the bound, and the next request would be a 503.
  const app = await engineApp(t, document, handlers, { env: { MAX_PARTS: '10', MAX_EVENT_LOOP_DELAY_MS: '0' } })
  const send = (url: string, payload: string, type: string) => app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } })
  const upload = (count: number) => multipart([{ name: 'title', value: 'x' }, { name: 'file', value: 'x', filename: 'a.txt' }, ...Array.from({ length: count - 2 }, () => ({ name: 'pages', value: '1' }))])
  const within = upload(10)
  t.equal((await send('/upload', within.payload, within.headers['content-type'])).statusCode, 200, '10 parts: read')
  for (const count of [11, 20_000]) {
    const past = upload(count)
    const res = await send('/upload', past.payload, past.headers['content-type'])
    t.equal(res.statusCode, 413, `${count} parts: refused`)
    t.equal(res.json().detail, 'Request body has more than 10 parts')
  }
  const form = (count: number) => Array.from({ length: count }, (_, i) => `f${i}=1`).join('&')
  t.equal((await send('/form', form(10), 'application/x-www-form-urlencoded')).statusCode, 200, 'a form of 10 fields: read')
  for (const body of [form(11), Array(200_000).fill('a=1').join('&'), '&'.repeat(100_000)]) {
    const res = await send('/form', body, 'application/x-www-form-urlencoded')
    t.equal(res.statusCode, 413, `a form of ${body.split('&').length} fields: refused`)
    t.equal(res.json().detail, 'Request body has more than 10 parts')
  }
  const defaults = await engineApp(t, document, handlers)
  const thousand = upload(1000)
  t.equal((await defaults.inject({ method: 'POST', url: '/upload', payload: thousand.payload, headers: thousand.headers })).statusCode, 200, 'by default, 1,000 parts are read')
  const more = upload(1001)
  t.equal((await defaults.inject({ method: 'POST', url: '/upload', payload: more.payload, headers: more.headers })).statusCode, 413, 'and 1,001 are not')
})

t.test('the verifier writes every body as the engine reads it: nothing found against the mock', async (t) => {
  const { app, document: model } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'bodies.yaml')
  t.teardown(() => app.close())
  const { operations } = await verify(model, injectTransport(app), { seed: 1, generated: 3 })
  for (const operation of operations) {
    t.same(operation.violations.map((v) => `${v.check}: ${v.detail}`), [], `${operation.method} ${operation.path}`)
    t.ok(operation.sent.some((sent) => sent.kind === 'valid' && sent.status === 200), 'valid requests sent, and answered 200')
  }
})

t.test('an optional form whose one property is required: its empty form is no body, as the engine reads it over HTTP (Content-Length: 0), so the verifier sends it as no invalid request', async (t) => {
  // As a directory document's POST /v0.1/PlayStop/.
  const stop = { post: { requestBody: { required: false, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } } }, responses: { 200: { description: 'stopped' } } } }
  const { app, document: model } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: { openapi: '3.1.0', info: { title: 'Play', version: '1.0.0' }, paths: { '/stop': stop } } }, 'play.yaml')
  t.teardown(() => app.close())
  const http = httpTransport(await app.listen({ port: 0, host: '127.0.0.1' }), { timeoutMs: 10_000, connections: 2 })
  t.teardown(http.close)
  const [operation] = (await verify(model, http.send, { seed: 1, generated: 3 })).operations
  t.same(operation.violations.map((v) => `${v.check}: ${v.detail}`), [], 'nothing found')
  t.ok(operation.sent.some((sent) => sent.kind === 'valid' && sent.status === 200), 'valid requests sent, and taken')
})
