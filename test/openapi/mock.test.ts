import { once } from 'node:events'
import { connect } from 'node:net'
import t from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { validSample } from '../../src/openapi/schemas/samples.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { captureLog } from '../helpers/app.ts'

// The mock (npm run mock): every operation answered from its document, as Prism answers: the
// first success, or the status `Prefer: code=` asks for; the example a media type gives, or the
// one `Prefer: example=` names, else a sample made from the schema and valid against it; declared
// headers filled in. An example that contradicts its schema is named once at start and never
// served; an operation the mock cannot serve is named once and left out, and the rest is served.

const pet = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', minimum: 1 }, name: { type: 'string', pattern: '^[A-Z][a-z]+$' }, tag: { type: 'string' } } }
const document = {
  openapi: '3.1.0',
  info: { title: 'Pets', version: '1.0.0' },
  paths: {
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: {
          200: {
            description: 'a pet',
            headers: { 'X-Rate-Remaining': { schema: { type: 'integer', minimum: 0 }, example: 42 } },
            content: { 'application/json': { schema: pet, examples: { rex: { value: { id: 1, name: 'Rex' } }, broken: { value: { id: 'one', name: 'x' } }, tom: { value: { id: 2, name: 'Tom', tag: 'cat' } } } } }
          },
          404: { description: 'none', content: { 'application/json': { schema: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } }, example: { code: 404, message: 'No such pet' } } } }
        }
      }
    },
    '/pets': { post: { operationId: 'addPet', requestBody: { required: true, content: { 'application/json': { schema: pet } } }, responses: { 201: { description: 'added', content: { 'application/json': { schema: pet } } }, 400: { description: 'bad', content: { 'application/json': { schema: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } } } } } } } },
    '/#X-Amz-Target=Pets.List': { post: { responses: { 200: { description: 'ok' } } } }
  }
}

t.test('answers from the document; Prefer chooses another declared answer', async (t) => {
  const { logStream, lines } = captureLog()
  const { app, refused, checkExamples } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'pets.yaml', logStream)
  t.teardown(() => app.close())
  t.same(refused.map((r) => r.operation), ['POST /#X-Amz-Target=Pets.List'], 'a path key no request can have: left out')
  t.equal(lines.filter((line) => /left out/.test(line.msg)).length, 1, 'named once in the log')
  t.match(lines.find((line) => /left out/.test(line.msg))?.problem, /has a path that no request can have/)

  t.same(await checkExamples(), { examples: 4, invalid: 1 }, 'at start, every example checked against its schema')
  const named = lines.filter((line) => line.msg === 'not served as the document writes it')
  t.equal(named.length, 1, 'the one that contradicts its schema named once')
  t.match(named[0].problem, 'GET /pets/{id} 200 application/json: the example "broken" contradicts its schema (/id must be integer)')

  const first = await app.inject({ url: '/pets/1' })
  t.equal(first.statusCode, 200, 'the first success')
  t.same(first.json(), { id: 1, name: 'Rex' }, 'its first example')
  t.equal(first.headers['x-rate-remaining'], '42', 'with its declared header, from its example')
  t.same((await app.inject({ url: '/pets/1', headers: { prefer: 'example=tom' } })).json(), { id: 2, name: 'Tom', tag: 'cat' }, 'Prefer: example=tom')
  t.same((await app.inject({ url: '/pets/1', headers: { prefer: 'example=broken' } })).json(), { id: 1, name: 'Rex' }, 'an example that contradicts its schema is never served: the first that does not')
  const missing = await app.inject({ url: '/pets/1', headers: { prefer: 'code=404' } })
  t.equal(missing.statusCode, 404, 'Prefer: code=404')
  t.same(missing.json(), { code: 404, message: 'No such pet' })
  t.equal((await app.inject({ url: '/pets/x' })).statusCode, 400, 'the request is checked as the service checks it')
  const added = await app.inject({ method: 'POST', url: '/pets', payload: { id: 3, name: 'Bo' } })
  t.equal(added.statusCode, 201)
  const sample = added.json()
  t.ok(Number.isInteger(sample.id) && sample.id >= 1 && /^[A-Z][a-z]+$/.test(sample.name), `no example: a sample valid against the schema (${JSON.stringify(sample)})`)
  const bad = await app.inject({ method: 'POST', url: '/pets', payload: { id: 0, name: 'Bo' } })
  t.same(bad.json(), { code: 400, message: 'body/id must be >= 1' }, 'an error in the shape the document declares for it')
})

t.test('answers a range the document declares in a type of it (*/* and application/*+json as JSON), and XML in XML', async (t) => {
  const thing = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 5 } } }
  const ranges = {
    openapi: '3.0.3',
    info: { title: 'Ranges', version: '1.0.0' },
    paths: {
      '/any': { get: { responses: { 200: { description: 'anything', content: { '*/*': { schema: thing } } } } } },
      // As gerermesaffaires' download: a file in */*, and an object in the JSON that */* is answered in.
      '/both': { get: { responses: { 200: { description: 'a document', content: { '*/*': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } }, 'application/json': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'object', required: ['base64'], properties: { base64: { type: 'string' } } } } } } } } } } },
      '/xml': { get: { responses: { 200: { description: 'XML', content: { 'application/xml': { schema: { type: 'object', xml: { name: 'Pet' }, properties: { name: { type: 'string' } } }, example: { name: 'Rex' } } } } } } },
      '/suffix': {
        post: {
          requestBody: { content: { 'application/*+json': { schema: thing }, 'application/json, charset=utf-8': { schema: thing } } },
          responses: { 200: { description: 'a thing', content: { 'application/*+json': { schema: thing } } } }
        }
      }
    }
  }
  const { app, refused } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: ranges }, 'ranges.yaml', captureLog().logStream)
  t.teardown(() => app.close())
  t.same(refused, [], 'every operation served')
  const any = await app.inject({ url: '/any' })
  t.equal(any.headers['content-type'], 'application/json; charset=utf-8')
  t.ok(any.json().id >= 5, `a sample valid against the schema (${any.body})`)
  for (const accept of [undefined, '*/*']) {
    const both = await app.inject({ url: '/both', ...accept !== undefined && { headers: { accept } } })
    t.equal(both.headers['content-type'], 'application/json; charset=utf-8')
    t.match(both.json(), { file: { base64: String } }, `JSON, as the document declares it, not */*'s (Accept: ${accept ?? 'none'})`)
  }
  const xml = await app.inject({ url: '/xml' })
  t.equal(xml.headers['content-type'], 'application/xml')
  t.match(xml.body, /^<Pet>\s*<name>Rex<\/name>\s*<\/Pet>/, 'an example given as data, written as XML')
  for (const type of ['application/vnd.things+json', 'application/json']) {
    const posted = await app.inject({ method: 'POST', url: '/suffix', payload: '{"id":7}', headers: { 'content-type': type } })
    t.equal(posted.statusCode, 200, `${type} is in application/*+json`)
    t.equal(posted.headers['content-type'], 'application/json; charset=utf-8')
    t.ok(posted.json().id >= 5)
    t.equal((await app.inject({ method: 'POST', url: '/suffix', payload: '{"id":1}', headers: { 'content-type': type } })).statusCode, 400, 'and checked against its schema')
  }
  t.equal((await app.inject({ method: 'POST', url: '/suffix', payload: 'id=7', headers: { 'content-type': 'text/plain' } })).statusCode, 415, 'a type outside every range')
})

t.test('a media type declared with parameters: an Accept that names them gets the declared answer', async (t) => {
  const declared = {
    openapi: '3.0.3',
    info: { title: 'Charsets', version: '1.0.0' },
    paths: { '/accounts': { get: { responses: { 200: { description: 'accounts', content: { 'application/json; charset=utf-8': { schema: pet, example: { id: 1, name: 'Rex' } } } }, 406: { description: 'not acceptable' } } } } }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: declared }, 'charsets.yaml', captureLog().logStream)
  t.teardown(() => app.close())
  for (const accept of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json']) {
    const answer = await app.inject({ url: '/accounts', headers: { accept } })
    t.equal(answer.statusCode, 200, `Accept: ${accept}`)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
    t.same(answer.json(), { id: 1, name: 'Rex' })
  }
})

t.test('declared headers it cannot send as written are left out, named once at start, and the answer still goes', async (t) => {
  // As RapidAPI's descriptions, captured from traffic, declare framing and hop-by-hop headers, and
  // Velo Payments' samples a Location no header can carry.
  const header = (example: string) => ({ schema: { type: 'string' }, example })
  const captured = {
    openapi: '3.0.3',
    info: { title: 'Captured', version: '1.0.0' },
    paths: {
      '/quotes': { get: { responses: { 200: { description: 'quotes', headers: { 'Transfer-Encoding': header('chunked'), 'Content-Encoding': header('gzip'), 'Content-Length': header('3'), Connection: header('keep-alive'), 'Keep-Alive': header('timeout=5'), 'X-RateLimit-Remaining': header('99') }, content: { 'application/json': { schema: { type: 'object' }, example: { quote: 'Sow in tears, reap in joy' } } } } } } },
      '/payees': { post: { responses: { 201: { description: 'created', headers: { Location: header('https://example.com/payees/\u2192\n1'), 'X-Id': header('1') } } } } }
    }
  }
  const { logStream, lines } = captureLog()
  const { app, checkExamples } = await buildMock(loadConfig({ LOG_LEVEL: 'warn' }), { text: '', document: captured }, 'captured.yaml', logStream)
  t.teardown(() => app.close())
  await checkExamples()
  const named = lines.filter((line) => line.msg === 'not served as the document writes it').map((line) => line.problem as string)
  t.same(named.map((problem) => /the header (\S+)/.exec(problem)?.[1]).sort(), ['Connection', 'Content-Encoding', 'Content-Length', 'Keep-Alive', 'Location', 'Transfer-Encoding'], 'each named at start')
  t.match(named.find((problem) => problem.includes('Location')), /POST \/payees 201: the header Location cannot be sent: .* holds characters HTTP forbids in a header/)

  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  for (let i = 0; i < 2; i++) {
    const quotes = await fetch(`${url}/quotes`)
    t.same(await quotes.json(), { quote: 'Sow in tears, reap in joy' }, 'a client reads the answer')
    t.equal(quotes.headers.get('x-ratelimit-remaining'), '99', 'with the headers that can be sent')
    t.equal(quotes.headers.get('content-encoding'), null)
    const payee = await fetch(`${url}/payees`, { method: 'POST' })
    t.equal(payee.status, 201, 'not a 500: the answer goes without the header')
    t.equal(payee.headers.get('location'), null)
    t.equal(payee.headers.get('x-id'), '1')
  }
  t.equal(lines.filter((line) => line.msg === 'not served as the document writes it').length, named.length, 'and never named again')
})

t.test('sheds nothing on event-loop lag: its own first compiles hold the loop, and a 503 is no declared answer', async (t) => {
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '50' }), { text: '', document }, 'pets.yaml', captureLog().logStream)
  t.teardown(() => app.close())
  await new Promise((resolve) => setTimeout(resolve, 2100)) // past the service's arming of shedding (limits.test.ts)
  for (let i = 0; i < 13; i++) { // a whole sample window lagging ~90 ms at every turn, as the service sheds on
    const until = Date.now() + 90
    while (Date.now() < until);
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal((await app.inject({ url: '/pets/1' })).statusCode, 200)
})

t.test('an error answer whose schema is written under another path is served, and a long path value the document allows is taken', async (t) => {
  // As DigitalOcean's description writes its errors: one $ref to a schema under another operation.
  const error = { type: 'object', required: ['id', 'message'], properties: { id: { type: 'string' }, message: { type: 'string' }, request_id: { type: 'string' } } }
  const shared = { $ref: '#/paths/~1v2~11-clicks/get/responses/401/content/application~1json/schema' }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Under paths', version: '1.0.0' },
    paths: {
      '/v2/1-clicks': { get: { responses: { 200: { description: 'ok' }, 401: { description: 'no', content: { 'application/json': { schema: error, example: { id: 'unauthorized', message: 'no' } } } } } } },
      '/v2/droplets/{droplet_id}': {
        get: {
          parameters: [{ name: 'droplet_id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, 400: { description: 'bad', content: { 'application/json': { schema: shared } } }, 401: { description: 'no', content: { 'application/json': { schema: shared } } } }
        }
      },
      '/arns/{arn}': { get: { parameters: [{ name: 'arn', in: 'path', required: true, schema: { type: 'string', maxLength: 2048 } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } } } }
    }
  }
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'under-paths.json', logStream)
  t.teardown(() => app.close())
  const refused = await app.inject({ url: '/v2/droplets/abc' })
  t.equal(refused.statusCode, 400, 'an invalid request is refused, not a 500')
  t.match(refused.json(), { id: String, message: String }, 'in the shape its error answer declares (which takes no status, so a value of it)')
  t.same(lines.filter((line) => line.level >= 50), [], 'nothing logged as a fault')
  const arn = `arn:aws:workspaces-web:us-east-1:123456789012:portal/${'a'.repeat(150)}`
  t.equal((await app.inject({ url: `/arns/${encodeURIComponent(arn)}` })).statusCode, 200, `a path value of ${arn.length} characters, as the schema allows`)
})

t.test('an error declared in */* with a schema problem details do not satisfy is answered valid against it', async (t) => {
  // As HubSpot's descriptions declare their errors: a default answer in */*, its schema requiring a category.
  const error = { type: 'object', required: ['category', 'correlationId', 'message'], properties: { category: { type: 'string' }, correlationId: { type: 'string', format: 'uuid' }, message: { type: 'string' } }, example: { category: 'VALIDATION_ERROR', correlationId: 'aeb5f871-7f07-4993-9211-075dc63e7cbf', message: 'Invalid input' } }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Ranged errors', version: '1.0.0' },
    paths: { '/domains': { get: { security: [{ key: [] }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, default: { description: 'an error', content: { '*/*': { schema: error } } } } } } },
    components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'x-key' } } }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'ranged.json')
  t.teardown(() => app.close())
  const refused = await app.inject({ url: '/domains' })
  t.equal(refused.statusCode, 401)
  t.match(refused.headers['content-type'], /^application\/json/, 'a range answered in JSON, not problem+json')
  t.same(refused.json(), error.example, 'the schema\'s example: problem details would lack its category')
})

t.test('a list of a oneOf whose branches take the same objects (OpenFIGI\'s mapping answer) is answered with an item one branch alone takes; a list whose items no value satisfies, empty, which its schema takes', async (t) => {
  const result = { oneOf: [{ type: 'object', properties: { data: { type: 'array', items: { type: 'object' } } } }, { type: 'object', properties: { warning: { type: 'string' } } }] }
  const list = (items: object) => ({ 200: { description: 'results', content: { 'application/json': { schema: { type: 'array', items } } } } })
  const document = { openapi: '3.0.0', info: { title: 'Mapping', version: '1.0.0' }, paths: { '/mapping': { post: { requestBody: { content: { 'application/json': { schema: { type: 'array', items: { type: 'object' } } } } }, responses: list(result) } }, '/none': { get: { responses: list({ allOf: [{ type: 'string' }, { type: 'integer' }] }) } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'mapping.json')
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/mapping', payload: [{}] })
  t.equal(res.statusCode, 200)
  t.same(res.json(), [{ data: [{}], warning: null }], 'null for the member of the other branch, which tells them apart')
  t.same((await app.inject({ method: 'GET', url: '/none' })).json(), [])
})

t.test('a string of a pattern shorter than its minLength at its fewest repeats is answered long enough and matching', async (t) => {
  // As AWS Payment Cryptography's: ^[0-9]+$ at least 3 long, a key ARN whose shortest match is 69 characters of 70.
  const output = { type: 'object', required: ['data', 'arn'], properties: { data: { type: 'string', pattern: '^[0-9]+$', minLength: 3, maxLength: 5 }, arn: { type: 'string', pattern: '^arn:aws:key/[0-9a-zA-Z]{16,64}$', minLength: 40 } } }
  const document = { openapi: '3.0.0', info: { title: 'Keys', version: '1.0.0' }, paths: { '/keys': { get: { responses: { 200: { description: 'a key', content: { 'application/json': { schema: output } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'keys.json')
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'GET', url: '/keys' })).json(), { data: '000', arn: 'arn:aws:key/0000000000000000000000000000' })
})

t.test('a writeOnly property deep in lists of lists is not in the answer made from the schema', async (t) => {
  // As bkk.hu's trip plans: the sampler keeps a writeOnly property it meets past its depth.
  const zone = { type: 'object', writeOnly: true, properties: { id: { type: 'string' } } }
  const leg = { type: 'object', required: ['mode'], properties: { mode: { type: 'string' }, timeZone: zone, 'time/zone~': zone } }
  const plan = { type: 'object', properties: { itineraries: { type: 'array', items: { type: 'object', properties: { legs: { type: 'array', items: leg } } } } } }
  const answer = { type: 'object', properties: { data: { type: 'object', properties: { entry: { type: 'object', properties: { plan } } } } } }
  const document = { openapi: '3.0.0', info: { title: 'Trips', version: '1.0.0' }, paths: { '/plan': { get: { responses: { 200: { description: 'a plan', content: { 'application/json': { schema: answer } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'trips.json')
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'GET', url: '/plan' })).json(), { data: { entry: { plan: { itineraries: [{ legs: [{ mode: 'string' }] }] } } } })
})

t.test('the access log leaves out an API key the document puts in the query, and any credential the query names', async (t) => {
  const document = {
    openapi: '3.0.3',
    info: { title: 'Keyed', version: '1.0.0' },
    security: [{ key: [] }],
    paths: { '/things': { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } }, example: ['a'] } } } } } } },
    components: { securitySchemes: { key: { type: 'apiKey', in: 'query', name: 'k' } } }
  }
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'keyed.json', logStream)
  t.teardown(() => app.close())
  const answer = await app.inject({ url: '/things?k=key-in-query-1&access_token=token-in-query-2&page=2' })
  t.equal(answer.statusCode, 200, 'the key took')
  t.same(lines.filter((line) => line.msg === 'request').map((line) => line.url), ['/things?k=[Redacted]&access_token=[Redacted]&page=2'], 'the URL as asked, but the two credentials\' values')
  t.notMatch(JSON.stringify(lines), /key-in-query-1|token-in-query-2/, 'in no line')
})

t.test('a request line or headers past MAX_HEADER_BYTES: 431 in the shape the document\'s errors share, not the Plant Store\'s', async (t) => {
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent', MAX_HEADER_BYTES: '2048' }), { text: '', document }, 'pets.yaml')
  t.teardown(() => app.close())
  const { port } = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
  for (const head of [`GET /pets/1?q=${'q'.repeat(4000)} HTTP/1.1\r\nHost: x\r\n\r\n`, `GET /pets/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`]) {
    const socket = connect(Number(port), '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
    const closed = once(socket, 'close')
    socket.write(head)
    await closed
    const [, status] = /^HTTP\/1\.1 (\d+)/.exec(received) ?? []
    t.equal(status, '431')
    t.match(received, /\r\ncontent-type: application\/json(; charset=utf-8)?\r\n/i, 'the type the document declares its errors in')
    t.same(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)), { code: 431, message: 'The request line and headers are too large' }, 'its {code, message}')
  }
})

t.test('an answer whose schema has a $ref to nothing: named once when the examples are checked, and the mock goes on serving the rest; each answer that reaches it, a 500 whose log names it', async (t) => {
  const { logStream, lines } = captureLog()
  // Two operations answer the one component that holds the $ref to nothing (as dnd5eapi's Monster does).
  const things = { description: 'things', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, example: { color: 'red' } } } }
  const broken = {
    openapi: '3.1.0',
    info: { title: 'Broken', version: '1.0.0' },
    paths: {
      '/things': { get: { responses: { 200: things } } },
      '/other-things': { get: { responses: { 200: things } } },
      '/ok': { get: { responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { fine: { type: 'boolean' } } }, example: { fine: true } } } } } } }
    },
    components: { schemas: { Thing: { type: 'object', properties: { color: { $ref: '#/$defs/Color' } } } } }
  }
  const { app, checkExamples } = await buildMock(loadConfig({ LOG_LEVEL: 'warn' }), { text: '', document: broken }, 'broken.yaml', logStream)
  t.teardown(() => app.close())
  t.same(await checkExamples(), { examples: 3, invalid: 2 }, 'checked to the end')
  t.match(lines.map((line) => line.problem).filter(Boolean), ['GET /things 200 application/json: its schema cannot be read (broken.yaml#/$defs/Color: is the target of a $ref, and there is nothing there); its examples are not served', 'GET /other-things 200 application/json: its schema cannot be read (broken.yaml#/$defs/Color: is the target of a $ref, and there is nothing there); its examples are not served'], 'each answer that reaches it, named')
  t.same((await app.inject({ url: '/ok' })).json(), { fine: true }, 'the rest served')
  for (const url of ['/things', '/other-things', '/things']) {
    t.equal((await app.inject({ url })).statusCode, 500, `${url}: nothing it could answer`)
    t.match(lines.at(-1), { msg: 'request failed', err: { message: /#\/\$defs\/Color: is the target of a \$ref, and there is nothing there/ } }, 'the log names the $ref to nothing, each time')
  }
})

t.test('a schema whose sample, eight references deep, would hold tens of thousands of values (DocuSign\'s recipients: 1.5 MB): answered shallower, valid, with at most 5,000', async (t) => {
  // Nine levels, each a schema of its own of four members of the next: 4^8 leaves, eight references deep.
  const level = (n: number) => ({ type: 'object', properties: { at: { type: 'string', format: 'date-time' }, ...n < 8 && Object.fromEntries(['a', 'b', 'c', 'd'].map((name) => [name, { $ref: `#/components/schemas/Level${n + 1}` }])) } })
  const wide = {
    openapi: '3.1.0',
    info: { title: 'Wide', version: '1.0.0' },
    paths: { '/tree': { get: { responses: { 200: { description: 'a tree', content: { 'application/json': { schema: { $ref: '#/components/schemas/Level0' } } } } } } } },
    components: { schemas: Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`Level${n}`, level(n)])) }
  }
  const { app, document } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: wide }, 'wide.json')
  t.teardown(() => app.close())
  const tree = (await app.inject({ url: '/tree' })).json()
  const values = (value: unknown): number => value !== null && typeof value === 'object' ? Object.values(value).reduce((count: number, inner) => count + values(inner), 1) : 1
  t.ok(values(tree) > 100 && values(tree) <= 5000, `${values(tree)} values`)
  t.ok(createValidators(document).response({ $ref: '#/components/schemas/Level0' })(tree), 'valid')
})

t.test('a date-time bounded in length as few are (minLength 25, as UniCourt\'s): answered long enough, and nothing written to the console besides the log', async (t) => {
  // openapi-sampler warns of it on the console, whatever its `quiet` says: once for every sample.
  // And more of them than the mends a sample had (UniCourt's case holds 67), each mended alone.
  const names = Array.from({ length: 50 }, (_, i) => `at${i}`)
  // And one past the sampler's depth, which it leaves out, mended three times: made a string, an instant, longer.
  let deep: object = { type: 'object', required: ['since'], properties: { since: { type: 'string', format: 'date-time', minLength: 25 } } }
  for (let i = 0; i < 9; i++) deep = { type: 'object', required: ['in'], properties: { in: deep } }
  const stamp = { type: 'object', required: [...names, 'deep'], properties: { ...Object.fromEntries(names.map((name) => [name, { type: 'string', format: 'date-time', minLength: 25 }])), deep } }
  const document = { openapi: '3.0.0', info: { title: 'Stamps', version: '1.0.0' }, paths: { '/stamp': { get: { responses: { 200: { description: 'a stamp', content: { 'application/json': { schema: stamp } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'stamps.json')
  t.teardown(() => app.close())
  const warned: unknown[] = []
  const warn = console.warn
  console.warn = (...args: unknown[]) => { warned.push(args) }
  t.teardown(() => { console.warn = warn })
  const answer = await app.inject({ method: 'GET', url: '/stamp' })
  t.equal(answer.statusCode, 200)
  const { deep: made, ...rest } = answer.json()
  const stamps = [...Object.values(rest), JSON.stringify(made).match(/"since":"([^"]+)"/)?.[1]] as string[]
  t.equal(stamps.length, 51)
  t.ok(stamps.every((at) => /^20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.0+Z$/.test(at) && at.length >= 25), `each an instant long enough, its fraction of a second in zeros: ${stamps[49]}, ${stamps[50]}`)
  t.same(warned, [], 'no line of the sampler\'s')
})

t.test('a property no value satisfies (a string whose enum lists numbers, as the directory\'s Shotstack has its aspectRatio): left out where the schema lets it be, and the answer valid', async (t) => {
  const output = { type: 'object', required: ['format'], properties: { format: { type: 'string', enum: ['mp4', 'gif'] }, aspectRatio: { type: 'string', enum: [969, 556] }, fps: { type: 'integer' } } }
  const document = { openapi: '3.0.0', info: { title: 'Renders', version: '1.0.0' }, paths: { '/render': { get: { responses: { 200: { description: 'a render', content: { 'application/json': { schema: { type: 'object', properties: { output } } } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'renders.json')
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'GET', url: '/render' })).json(), { output: { format: 'mp4', fps: 0 } })
})

t.test('a list\'s item no value satisfies: the list answered without it, and the answer valid, with nothing to warn of', async (t) => {
  // SendGrid's message: its allOf gives an event's required bounce_type two enums that share none.
  const event = (bounce: string[]) => ({ type: 'object', required: ['event_name', 'bounce_type'], properties: { event_name: { type: 'string' }, bounce_type: { type: 'string', enum: bounce } } })
  const message = { allOf: [{ type: 'object', required: ['msg_id', 'events'], properties: { msg_id: { type: 'string' }, events: { type: 'array', items: event(['bounced', 'blocked']) } } }, { type: 'object', properties: { events: { type: 'array', items: event(['soft', 'hard']) } } }] }
  // Mercedes-Benz's ProductGroup: an object whose enum lists only text.
  const group = { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, enum: ['PKW', 'VAN', 'SMART'] }
  const market = { type: 'object', required: ['market', 'productGroups'], properties: { market: { type: 'string' }, productGroups: { type: 'array', items: group } } }
  const cases = [{ schema: message, answered: { msg_id: 'string', events: [] } }, { schema: market, answered: { market: 'string', productGroups: [] } }]
  for (const { schema, answered } of cases) {
    const document = { openapi: '3.0.0', info: { title: 'Lists', version: '1.0.0' }, paths: { '/one': { get: { responses: { 200: { description: 'one', content: { 'application/json': { schema } } } } } } } }
    const warned: string[] = []
    const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'warn' }), { text: '', document }, 'lists.json', { write: (line: string) => { warned.push(JSON.parse(line).problem) } })
    t.teardown(() => app.close())
    t.same([(await app.inject({ method: 'GET', url: '/one' })).json(), warned], [answered, []])
  }
})

t.test('a oneOf of objects that require nothing (jumpseller\'s store status or the new store), which every object matches twice: answered with the first, and null for the other\'s member, which tells them apart', async (t) => {
  const status = { type: 'object', properties: { status: { type: 'object', properties: { message: { type: 'string' }, percentage: { type: 'string' } } } } }
  const store = { type: 'object', properties: { store: { type: 'object', properties: { code: { type: 'string' } } } } }
  const document = { openapi: '3.0.0', info: { title: 'Stores', version: '1.0.0' }, paths: { '/store/check_status.json': { get: { responses: { 200: { description: 'a status, or the store', content: { 'application/json': { schema: { oneOf: [status, store] } } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'stores.json')
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'GET', url: '/store/check_status.json' })).json(), { status: { message: 'string', percentage: 'string' }, store: null })
})

t.test('a oneOf whose first branch declares every property of the second (Shotstack\'s video asset, and its image asset): the second kept, with null for a member only the first declares, which tells them apart', async (t) => {
  const image = { type: 'object', required: ['type', 'src'], properties: { type: { type: 'string' }, src: { type: 'string' } } }
  const video = { type: 'object', required: ['type', 'src'], properties: { ...image.properties, trim: { type: 'number' } } }
  const schema = { oneOf: [video, image] }
  const document = { openapi: '3.0.0', info: { title: 'Clips', version: '1.0.0' }, paths: { '/clip': { get: { responses: { 200: { description: 'a clip\'s asset', content: { 'application/json': { schema } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'clips.json')
  t.teardown(() => app.close())
  const answer = (await app.inject({ method: 'GET', url: '/clip' })).json()
  t.same(answer, { type: 'string', src: 'string', trim: null }, 'the image, which takes what it does not declare')
  t.ok(createValidators(document).response(schema)(answer), 'valid: one branch takes it')
})

t.test('a oneOf one of whose branches is a oneOf of objects that require nothing (Zoom\'s account settings: the settings, the authentication of meetings or of recordings, or the security): answered valid, the outer oneOf mended, not the inner', async (t) => {
  const settings = { type: 'object', properties: { in_meeting: { type: 'object', properties: { chat: { type: 'boolean' } } } } }
  const authentication = { type: 'object', oneOf: [{ properties: { meeting_authentication: { type: 'boolean' } } }, { properties: { recording_authentication: { type: 'boolean' } } }] }
  const security = { type: 'object', properties: { meeting_security: { type: 'object', properties: { waiting_room: { type: 'boolean' } } } } }
  const schema = { oneOf: [settings, authentication, security] }
  const document = { openapi: '3.0.0', info: { title: 'Accounts', version: '1.0.0' }, paths: { '/accounts/{id}/settings': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'its settings', content: { 'application/json': { schema } } } } } } } }
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'accounts.json', logStream)
  t.teardown(() => app.close())
  const answer = (await app.inject({ method: 'GET', url: '/accounts/me/settings' })).json()
  t.ok(createValidators(document).response(schema)(answer), `valid: ${JSON.stringify(answer)}`)
  t.same(answer, { in_meeting: { chat: true }, meeting_security: null }, 'the settings, with null for the security\'s member, which tells them apart')
  t.notOk(lines.some((line) => /no sample made from the schema is valid/.test(String(line.problem))), 'no invalid sample served')
})

t.test('a $ref whose pointer passes through another $ref (dnd5eapi.co\'s, bundled: `#/paths/…/schema/allOf/1/…`, where `schema` is a $ref to Monster beside stubs 3.0 ignores): followed through it, and answered valid, not 500', async (t) => {
  const damage = { type: 'object', required: ['dice'], properties: { dice: { type: 'string', pattern: '^[1-9]d(4|6|8)$' } } }
  const monster = { allOf: [{ type: 'object', required: ['index'], properties: { index: { type: 'string' } } }, { type: 'object', required: ['actions'], properties: { actions: { type: 'array', minItems: 1, items: { type: 'object', required: ['damage'], properties: { damage: { type: 'array', minItems: 1, items: damage } } } } } }] }
  const stubs = { 1: { properties: { actions: { items: { properties: { damage: { items: {} } } } } } } }
  const through = '#/paths/~1monsters~1%7Bindex%7D/get/responses/200/content/application~1json/schema/allOf/1/properties/actions/items/properties/damage/items'
  const index = [{ name: 'index', in: 'path', required: true, schema: { type: 'string' } }]
  const document = {
    openapi: '3.0.1',
    info: { title: 'Monsters', version: '1.0.0' },
    paths: {
      '/monsters/{index}': { get: { parameters: index, responses: { 200: { description: 'the monster', content: { 'application/json': { schema: { $ref: '#/components/schemas/Monster', allOf: stubs } } } } } } },
      '/monsters/{index}/damage': { get: { parameters: index, responses: { 200: { description: 'its first damage', content: { 'application/json': { schema: { $ref: through } } } } } } }
    },
    components: { schemas: { Monster: monster } }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'monsters.json')
  t.teardown(() => app.close())
  const validators = createValidators({ ...document, openapi: '3.1.0', paths: {} } as any)
  for (const [url, schema] of [['/monsters/aboleth', monster], ['/monsters/aboleth/damage', damage]] as const) {
    const answer = await app.inject({ method: 'GET', url })
    t.equal(answer.statusCode, 200, `${url}: 200`)
    t.ok(validators.response(schema)(answer.json()), `${url}: valid, ${answer.body}`)
  }
})

t.test('a declared header is answered valid against its schema: a value of its pattern where none is given (Apple\'s ETag, 1,002 characters), and an example its schema refuses not sent', async (t) => {
  const headers = {
    ETag: { required: true, schema: { type: 'string', pattern: '^"[a-f0-9]{40}"$' } },
    'X-Count': { example: 'many', schema: { type: 'integer', minimum: 1 } },
    'Cache-Control': { example: 'max-age=1800', schema: { type: 'string' } }
  }
  const document = { openapi: '3.0.0', info: { title: 'Config', version: '1.0.0' }, paths: { '/configuration': { get: { responses: { 200: { description: 'it', headers } } } } } }
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'config.json', logStream)
  t.teardown(() => app.close())
  const answer = await app.inject({ method: 'GET', url: '/configuration' })
  t.ok(lines.some((line) => line.problem === 'GET /configuration 200: the header X-Count\'s example contradicts its schema (/ must be integer); a value of its schema is sent instead'), 'the example it refuses named in the log')
  t.match(answer.headers.etag, /^"[a-f0-9]{40}"$/, 'of its pattern')
  t.equal(answer.headers['x-count'], '1', 'a value of its schema, not the example it refuses')
  t.equal(answer.headers['cache-control'], 'max-age=1800', 'an example its schema takes, as before')
})

t.test('a string whose pattern\'s first match its minLength refuses (AWS Location\'s actions, ^geo:\\w*\\*?$ of at least 5): answered with a longer match, valid', async (t) => {
  const restrictions = { type: 'object', required: ['AllowActions'], properties: { AllowActions: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^geo:\\w*\\*?$', minLength: 5, maxLength: 200 } } } }
  const document = { openapi: '3.0.0', info: { title: 'Keys', version: '1.0.0' }, paths: { '/keys': { get: { responses: { 200: { description: 'a key', content: { 'application/json': { schema: restrictions } } } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'keys.json')
  t.teardown(() => app.close())
  const [action] = (await app.inject({ method: 'GET', url: '/keys' })).json().AllowActions
  t.ok(/^geo:\w*\*?$/.test(action) && action.length >= 5, `a match long enough: ${action}`)
})

t.test('a string of a format whose pattern its value does not match (optimade\'s version URLs: a uri that ends in /v1): answered with a URI the pattern takes, valid', async (t) => {
  const versions = { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri', pattern: '.+/v[0-1](\\.[0-9]+)*/?$' }, version: { type: 'string' } } }
  const document = { openapi: '3.0.0', info: { title: 'Versions', version: '1.0.0' }, paths: { '/versions': { get: { responses: { 200: { description: 'a version', content: { 'application/json': { schema: versions } } } } } } } }
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'versions.json', logStream)
  t.teardown(() => app.close())
  const { url } = (await app.inject({ method: 'GET', url: '/versions' })).json()
  t.ok(/.+\/v[0-1](\.[0-9]+)*\/?$/.test(url) && URL.canParse(url), `a URL of the pattern: ${url}`)
  t.notOk(lines.some((line) => /closest/.test(line.problem ?? '')), 'no closest sample named at start')
})

t.test('a schema\'s sample is made once, however often it is asked for, and each caller is given its own copy to change', async (t) => {
  // Each read of the schema counted: the sampler, the mender and the validator's compiler read it as they make a sample.
  let reads = 0
  const item = { type: 'object', required: ['name', 'tags'], properties: { name: { type: 'string', pattern: '^[A-Z][a-z]+$' }, tags: { type: 'array', items: { type: 'string' } } } }
  const schema = new Proxy(item, { get: (target, key) => { reads++; return Reflect.get(target, key) } })
  const document = { openapi: '3.1.0', info: { title: 'Items', version: '1.0.0' }, paths: {} }
  const validate = createValidators(document).request(schema)
  const first = validSample(document, schema, validate, { direction: 'request' }) as { value: { name: string, tags: string[] }, valid: boolean }
  const readsToMake = reads
  t.ok(readsToMake > 0 && first.valid && validate(first.value), 'made, valid')
  const made = structuredClone(first.value)
  first.value.tags.push('changed by its caller')
  const again = validSample(document, schema, validate, { direction: 'request' })
  t.equal(reads, readsToMake, 'asked again: the schema not read again')
  t.same(again, { value: made, valid: true }, 'as it was made, not as a caller changed it')
  validSample(document, schema, validate, { direction: 'request', minimal: true })
  t.ok(reads > readsToMake, 'other options: made anew')
})
