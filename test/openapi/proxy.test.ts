import { createServer, request, type IncomingHttpHeaders } from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { modelOf } from '../../src/openapi/document/upgrade.ts'
import { validatingProxy, type ValidatingProxyOptions } from '../../src/openapi/proxy/validating-proxy.ts'
import { PROXY_CHECKS, type CheckName } from '../../src/openapi/verify/checks.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { FAULTS, PETS, startPets, TOKEN, type Fault } from '../helpers/pets-service.ts'
import { freePort } from '../helpers/ports.ts'

// The validating proxy (src/openapi/proxy/) between a client and a service written by hand
// (test/helpers/pets-service.ts), over real HTTP: what the client receives is what the service
// sent, byte for byte; what the report names is exactly what was planted, in the service (one
// fault at a time) and in the traffic (requests the document does not allow); no log line and
// no report holds the token.

interface Received { status: number, headers: IncomingHttpHeaders, raw: string[], body: Buffer }

/** One request over a fresh connection, its answer as it came; `path` is sent as given (an absolute URL too, as to an HTTP proxy). */
async function send (url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Received> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, path, method, headers, agent: false, signal: AbortSignal.timeout(10_000) }, (incoming) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject).on('end', () => resolve({ status: incoming.statusCode!, headers: incoming.headers, raw: incoming.rawHeaders, body: Buffer.concat(chunks) }))
    })
    outgoing.on('error', reject).end(body)
  })
}

interface Logged { operation: string, check: string, detail: string, curl: string }

async function startProxy (t: Test, upstream: string, { document = PETS as object, ...options }: Partial<ValidatingProxyOptions> & { document?: object, bodyLimit?: number } = {}) {
  const logged: Logged[] = []
  const failures: string[] = []
  const http = { ...loadConfig({}).http, ...(options.bodyLimit !== undefined && { bodyLimit: options.bodyLimit }) }
  const proxy = await validatingProxy({
    http,
    document: await modelOf(structuredClone(document) as any, { inPlace: true }),
    file: 'pets.json',
    upstream,
    enabled: new Set<CheckName>(PROXY_CHECKS),
    timeoutMs: 10_000,
    told: {
      violation: (operation, { check, detail }, curl) => logged.push({ operation, check, detail, curl }),
      failure: (_operation, failure) => failures.push(failure),
      unjudged: (request, problem) => t.fail(`${request} not judged: ${problem}`)
    },
    ...options
  })
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { proxy.server.close(resolve); proxy.server.closeAllConnections() }))
  return { url: `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`, server: proxy.server, report: proxy.report, logged, failures }
}

const auth = { authorization: `Bearer ${TOKEN}` }
const json = { ...auth, 'content-type': 'application/json' }
// A client's traffic: what a client of the document sends, and four requests it does not allow.
const TRAFFIC: Array<[string, string, Record<string, string>, string?]> = [
  ['GET', '/pets?limit=5', auth],
  ['POST', '/pets', json, JSON.stringify({ name: 'Felix', tag: 'cat' })],
  ['GET', '/pets/1', auth],
  ['HEAD', '/pets/1', auth],
  ['GET', '/pets/2', auth],
  ['GET', '/pets/999', auth],
  ['GET', '/pets/1', {}],
  ['POST', '/pets', json, JSON.stringify({ tag: 5 })],
  ['GET', '/pets?limit=500', auth],
  ['DELETE', '/pets/1', auth]
]
const PLANTED = ['GET /pets: querystring/limit must be <= 100', 'POST /pets: body must have required property \'name\'', 'GET /pets/{id}: Missing credentials: send Authorization: Bearer …', 'GET /pets/{id}: Method DELETE is not allowed on /pets/{id}; it allows GET, HEAD, OPTIONS']
// What the service's fault shows in this traffic, if anything (an added pet not kept is a sequence's, not one exchange's;
// this client sends no name at or past its maxLength nor out of ASCII, no limit of 100, no token other than the
// service's, no valid pet without its tag), and what follows from it: a 500 the operation does not declare, a pet
// kept without the name its schema requires.
const UNSHOWN = new Set<Fault>(['an added pet not kept', 'a name past its maxLength accepted', 'a name at its maxLength refused', 'a limit at its maximum refused', 'any bearer token taken', 'the connection cut on a name not in ASCII', 'a pet without its optional tag answered 500', 'a name counted in bytes'])
const SHOWN = Object.entries(FAULTS).filter(([fault]) => !UNSHOWN.has(fault as Fault)) as Array<[Fault, CheckName]>
const FOLLOWING: Partial<Record<Fault, CheckName>> = { 'a 5xx': 'status_code_conformance', 'an invalid body accepted with 2xx': 'response_schema_conformance' }

for (const [fault, check] of [[undefined, undefined], ...SHOWN] as Array<[Fault | undefined, CheckName | undefined]>) {
  t.test(fault === undefined ? 'a service that keeps its word: only the client\'s planted requests are named' : `${fault}: named by ${check}, and nothing else`, async (t) => {
    // Two services alike: one behind the proxy, one asked directly, the same requests in the same order.
    const direct = await startPets(t, fault)
    const behind = await startPets(t, fault)
    const proxy = await startProxy(t, behind.url)
    for (const [method, path, headers, body] of TRAFFIC) {
      const [through, straight] = [await send(proxy.url, method, path, headers, body), await send(direct.url, method, path, headers, body)]
      t.equal(through.status, straight.status, `${method} ${path}: the status`)
      t.same(through.body, straight.body, `${method} ${path}: the body, byte for byte`)
      const endToEnd = (r: Received) => Object.fromEntries(Object.entries(r.headers).filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)))
      t.same(endToEnd(through), endToEnd(straight), `${method} ${path}: the headers`)
    }
    const report = await proxy.report('pets.json')
    const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
    t.same([...new Set(found.map((v) => v.check))].sort(), ['request_conformance', ...(check === undefined ? [] : [check]), ...(fault === undefined || FOLLOWING[fault] === undefined ? [] : [FOLLOWING[fault]])].sort(), `the checks named: ${JSON.stringify(found.map((v) => `${v.operation} ${v.check}: ${v.detail}`))}`)
    const planted = found.filter((v) => v.check === 'request_conformance').map((v) => `${v.operation}: ${v.detail.replace(/^.*?: /, '')}`)
    t.same(planted, PLANTED, 'the client\'s four requests the document does not allow, each named by what breaks it (one has no credentials, one a method its path does not declare)')
    const key = (v: { operation: string, check: string, detail: string }) => `${v.operation} ${v.check}: ${v.detail}`
    t.same([...new Set(proxy.logged.map(key))].sort(), found.map(key).sort(), 'each violation logged as found (each time; the report, once)')
    for (const text of [JSON.stringify(report), JSON.stringify(proxy.logged)]) t.notMatch(text, TOKEN, 'no token in the report or the log')
    t.match(proxy.logged[0].curl, /^curl -sS -i -X [A-Z]+ 'http:\/\/127\.0\.0\.1:\d+\/pets/, 'a curl command to the service')
    if (check !== undefined && check !== 'ignored_auth') t.match(found.find((v) => v.check === check)!.curl, '-H \'authorization: \'"$AUTHORIZATION"', 'the credentials as a variable')
    // What the traffic covered.
    // The DELETE, of a method its path does not declare, under the path's first operation, as the verifier sends one.
    t.same(report.operations.map((o) => [o.operationId, o.requests]), [['listPets', 2], ['addPet', 2], ['getPet', 6]])
    t.same(report.coverage, { operations: 3, unseen: [], outside: [] })
    t.ok(Object.values(report.operations[2].statuses!).reduce((a, b) => a + b) === 6, 'the statuses seen, counted')
  })
}

t.test('streamed both ways, as large as the upstream sends, its reason phrase and trailer fields too; past the judged size, passed on unjudged with a note', async (t) => {
  const big = randomBytes(3 * 1024 * 1024)
  let firstSent!: () => void
  const firstReceived = new Promise<void>((resolve) => { firstSent = resolve })
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', async () => {
      res.writeHead(200, 'Echoed', [['Content-Type', 'application/octet-stream'], ['X-Echo-Bytes', String(Buffer.concat(chunks).length)], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2'], ['Trailer', 'X-Digest']].flat())
      // The first chunk, and the rest only once the client has it: the proxy must stream.
      res.write(big.subarray(0, 1024))
      await firstReceived
      res.addTrailers({ 'X-Digest': createHash('sha256').update(big).digest('hex') })
      res.end(big.subarray(1024))
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const document = { openapi: '3.1.0', info: { title: 'Bytes', version: '1' }, paths: { '/echo': { post: { operationId: 'echo', requestBody: { content: { 'application/octet-stream': {} } }, responses: { 200: { description: 'bytes', content: { 'application/octet-stream': {} } } } } } } }
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document, bodyLimit: 1024 * 1024 })
  const sentBody = randomBytes(2 * 1024 * 1024)
  let reason: string | undefined
  let trailers: IncomingHttpHeaders = {}
  const received = await new Promise<Received>((resolve, reject) => {
    const outgoing = request(`${proxy.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, agent: false }, (incoming) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        firstSent()
      }).on('end', () => {
        reason = incoming.statusMessage
        trailers = incoming.trailers
        resolve({ status: incoming.statusCode!, headers: incoming.headers, raw: incoming.rawHeaders, body: Buffer.concat(chunks) })
      })
    })
    outgoing.on('error', reject).end(sentBody)
  })
  t.equal(reason, 'Echoed', 'the status line\'s reason phrase, as the upstream wrote it')
  t.same(trailers, { 'x-digest': createHash('sha256').update(big).digest('hex') }, 'the trailer fields after the body')
  t.equal(received.headers.trailer, 'X-Digest', 'and the header that announces them')
  t.equal(received.headers['x-echo-bytes'], String(sentBody.length), 'the request\'s every byte reached the upstream')
  t.ok(received.body.equals(big), 'the answer\'s every byte reached the client')
  t.same(received.headers['set-cookie'], ['a=1', 'b=2'], 'a header sent twice, twice')
  const report = await proxy.report('bytes.json')
  t.same(report.operations[0].notes, ['a request body of over 1048576 bytes: the request passed on unjudged', 'an answer of over 1048576 bytes: its body passed on unjudged'])
  t.same(report.operations[0].violations, [], 'its status and media type judged, and found right')
})

t.test('an upstream that cannot be reached, or answers too late: 502 and 504 in the document\'s error shape', async (t) => {
  // A port nothing listens on, which no other test's server can be handed meanwhile.
  const unreachable = await startProxy(t, `http://127.0.0.1:${await freePort()}`)
  const bad = await send(unreachable.url, 'GET', '/pets/1', auth)
  t.equal(bad.status, 502)
  const document = await modelOf(structuredClone(PETS) as any, { inPlace: true })
  const errorSchema = (document as any).paths['/pets/{id}'].get.responses[404].content['application/json'].schema
  t.ok(createValidators(document).response(errorSchema)(JSON.parse(bad.body.toString())), `in the document's error shape: ${bad.body}`)
  t.match(JSON.parse(bad.body.toString()).message, /^Bad Gateway: http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)/)

  const silent = createServer(() => {}) // takes requests, answers none
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); return new Promise((resolve) => silent.close(resolve)) })
  const late = await startProxy(t, `http://127.0.0.1:${(silent.address() as { port: number }).port}`, { timeoutMs: 300 })
  const timedOut = await send(late.url, 'GET', '/pets/1', auth)
  t.equal(timedOut.status, 504)
  t.match(JSON.parse(timedOut.body.toString()).message, /^Gateway Timeout: .* sent no answer within 0\.3 s/)
  const report = await late.report('pets.json')
  t.same(report.operations[0].notes, [`answered 504 by the proxy: ${late.failures[0]}`], 'the report says the proxy answered, not the service')
  t.same(report.operations[0].violations, [], 'and judges no answer the service did not give')
})

t.test('a slow client holds the upstream back; a client gone takes the upstream\'s request with it; an answer cut off is cut off for the client', async (t) => {
  const total = 64 * 1024 * 1024
  const chunk = Buffer.alloc(64 * 1024, 7)
  let written = 0
  let upstreamClosed!: () => void
  const closedUpstream = new Promise<void>((resolve) => { upstreamClosed = resolve })
  const upstream = createServer((req, res) => {
    if (req.url === '/small') {
      res.end('ok')
      return
    }
    if (req.url === '/cut') {
      // Promises more than it sends, then drops the connection.
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000000' })
      res.write(chunk)
      setTimeout(() => res.destroy(), 50)
      return
    }
    res.on('close', () => upstreamClosed())
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) })
    const more = (): void => {
      while (written < total) {
        written += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', more)
          return
        }
      }
      res.end()
    }
    more()
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { upstream.closeAllConnections(); return new Promise((resolve) => upstream.close(resolve)) })
  const document = { openapi: '3.1.0', info: { title: 'Bytes', version: '1' }, paths: { '/big': { get: { responses: { 200: { description: 'bytes', content: { 'application/octet-stream': {} } } } } }, '/cut': { get: { responses: { 200: { description: 'bytes', content: { 'application/octet-stream': {} } } } } } } }
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })

  // A client that reads its first bytes, then nothing for a while, then goes away.
  await new Promise<void>((resolve, reject) => {
    const outgoing = request(`${proxy.url}/big`, { agent: false }, (incoming) => {
      incoming.once('data', () => {
        incoming.pause()
        setTimeout(() => {
          t.ok(written < total / 2, `the upstream held back while the client read nothing: ${written} of ${total} bytes written`)
          outgoing.destroy()
          resolve()
        }, 500)
      })
    })
    outgoing.on('error', reject).end()
  })
  await Promise.race([closedUpstream, new Promise((_resolve, reject) => setTimeout(() => reject(new Error('the upstream\'s request outlived its client')), 5_000))])
  t.pass('the client gone, the upstream\'s request was closed')

  const cut = await new Promise<{ aborted: boolean, bytes: number }>((resolve) => {
    let bytes = 0
    request(`${proxy.url}/cut`, { agent: false }, (incoming) => {
      incoming.on('data', (c: Buffer) => { bytes += c.length }).on('error', () => {}).on('close', () => resolve({ aborted: !incoming.complete, bytes }))
    }).on('error', () => resolve({ aborted: true, bytes })).end()
  })
  t.same(cut, { aborted: true, bytes: chunk.length }, 'the client got what was sent, and an answer cut off, not one made whole')
  const after = await send(proxy.url, 'GET', '/small')
  t.same([after.status, after.body.toString()], [200, 'ok'], 'and the proxy carries on')
})

t.test('an upstream that answers before it has read the body (a 413, and its connection closed): every exchange is told, and the report comes', async (t) => {
  const upstream = createServer((_req, res) => {
    res.writeHead(413, { connection: 'close', 'content-type': 'application/json' }).end('{"message":"too large"}')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { upstream.closeAllConnections(); return new Promise((resolve) => upstream.close(resolve)) })
  const document = { openapi: '3.1.0', info: { title: 'Bytes', version: '1' }, paths: { '/echo': { post: { requestBody: { content: { 'application/octet-stream': {} } }, responses: { 200: { description: 'echoed' }, 413: { description: 'too large' } } } } } }
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await send(proxy.url, 'POST', '/echo', { 'content-type': 'application/octet-stream' }, Buffer.alloc(2 * 1024 * 1024, 97))).status)
  // Whether the proxy reads the 413 before the closed connection's reset is TCP's race: a 502 otherwise.
  t.ok(statuses.every((status) => status === 413 || status === 502), `the upstream's 413, or the proxy's 502: ${statuses.join(', ')}`)
  // As npm run proxy ends on SIGINT: its connections closed, then the report.
  proxy.server.closeAllConnections()
  const report = await Promise.race([proxy.report('bytes.json'), sleep(5_000).then(() => undefined)])
  t.ok(report !== undefined, 'the report comes: no exchange waits on a body nobody reads')
  t.equal(Object.values(report?.operations[0].statuses ?? {}).reduce((a, b) => a + b, 0), 6, 'each exchange counted')
  t.ok(report?.operations[0].notes?.every((note) => /^(a request body (its client stopped sending once answered|of over 1048576 bytes): the request passed on unjudged|answered 502 by the proxy: .* did not answer)/.test(note)), `what was not judged, and why: ${JSON.stringify(report?.operations[0].notes)}`)
  t.same(report?.operations[0].violations, [], 'nothing the upstream did is a violation: its 413 is declared')
})

t.test('a request in absolute form, from a client that uses the proxy as its HTTP proxy: sent on and judged as its path', async (t) => {
  const pets = await startPets(t)
  const proxy = await startProxy(t, pets.url)
  const direct = await send(pets.url, 'GET', '/pets/1', auth)
  // The absolute form an HTTP proxy's client sends.
  const through = await send(proxy.url, 'GET', 'http://pets.example/pets/1', auth)
  t.same([through.status, through.body.toString()], [direct.status, direct.body.toString()], 'the upstream answered its path')
  const report = await proxy.report('pets.json')
  t.same(report.operations.map((o) => [o.operationId, o.requests]), [['getPet', 1]], 'judged as the operation of its path')
  t.same(report.coverage?.outside, [], 'and not as a path outside the document')
})

t.test('credentials the document does not name, in a header or the query, are kept out of the log and the report as well; a short one only where it is sent', async (t) => {
  const pets = await startPets(t)
  const proxy = await startProxy(t, pets.url)
  // limit=500 breaks the document: a violation, with its curl command.
  // min_key=0 (Spotify's musical key, a credential by its name): hidden where it is, not in the host's 127.0.0.1 nor in 500.
  await send(proxy.url, 'GET', '/pets?limit=500&access_token=query-token-1&apiKey=query-key-2&author=Ann&min_key=0', {
    ...auth, 'x-api-key': 'gateway-key-3', 'X-Auth-Token': 'header-token-4', 'x-request-id': 'req-5'
  })
  const report = await proxy.report('pets.json')
  const { curl } = proxy.logged[0]
  for (const text of [JSON.stringify(report), JSON.stringify(proxy.logged)]) {
    for (const secret of [TOKEN, 'query-token-1', 'query-key-2', 'gateway-key-3', 'header-token-4']) t.notMatch(text, secret, `no ${secret} in the report or the log`)
  }
  for (const variable of ['"$AUTHORIZATION"', '"$ACCESS_TOKEN"', '"$API_KEY"', '"$X_API_KEY"', '"$X_AUTH_TOKEN"']) t.ok(curl.includes(variable), `${variable} in its place: ${curl}`)
  t.ok(curl.includes('author=Ann') && curl.includes('x-request-id: req-5'), 'and what holds no credential as it was sent')
  t.match(curl, /'http:\/\/127\.0\.0\.1:\d+\/pets\?limit=500&access_token='"\$ACCESS_TOKEN"'&apiKey='"\$API_KEY"'&author=Ann&min_key='"\$MIN_KEY" -H /, 'the short one in its place alone')
})

t.test('a client that speaks to the proxy as to the document\'s server sends its paths under the server\'s base path: judged as the document\'s paths', async (t) => {
  // The service as it is deployed: under /v1, answering a pet with a name of the wrong type.
  const upstream = createServer((req, res) => {
    const found = /^\/v1\/pets\/(\d+)$/.exec(req.url ?? '')
    res.writeHead(found === null ? 404 : 200, { 'content-type': 'application/json', 'x-rate-limit': '10' }).end(JSON.stringify(found === null ? { message: 'no such pet' } : { id: Number(found[1]), name: 5 }))
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const document = { ...PETS, servers: [{ url: 'https://{host}/{version}', variables: { host: { default: 'pets.example' }, version: { default: 'v1' } } }] }
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  t.equal((await send(proxy.url, 'GET', '/v1/pets/1', auth)).status, 200, 'sent on as it came')
  // As a client whose HTTP proxy it is: the request in absolute form.
  t.equal((await send(proxy.url, 'GET', 'http://pets.example/v1/pets/abc', auth)).status, 404)
  await send(proxy.url, 'GET', '/v1/owners/1', auth)
  const report = await proxy.report('pets.json')
  t.same(report.operations.map((o) => [o.operationId, o.requests, o.violations.map((v) => v.check).sort()]), [['getPet', 2, ['request_conformance', 'response_schema_conformance']]], 'both judged as GET /pets/{id}: the answer\'s name of the wrong type, and the client\'s id that is no integer')
  t.same(report.coverage?.outside, [{ request: 'GET /v1/owners/1', count: 1 }], 'a path the document does not have, as it was sent')
})

t.test('JSON the engine refuses for bounds of its own (a key twice, __proto__, an integer past 2^53 not int64), or may take or refuse (a byte order mark): the request named where it is at fault, the service not judged for taking or refusing it', async (t) => {
  // A service on JSON.parse: it takes a key twice and __proto__, and refuses a byte order mark; and
  // any pet id, however long.
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
      if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json', 'x-rate-limit': '10' }).end('{"id":1,"name":"Rex"}')
      let pet
      try {
        pet = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"not JSON"}')
        return
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 1, name: String(pet.name) }))
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`)
  const statuses = []
  for (const body of ['{"name":"Rex","name":"Max"}', '{"name":"Rex","__proto__":{"admin":true}}', '\ufeff{"name":"Rex"}']) statuses.push((await send(proxy.url, 'POST', '/pets', json, body)).status)
  statuses.push((await send(proxy.url, 'GET', '/pets/12345678901234567890', auth)).status)
  t.same(statuses, [201, 201, 400, 200], 'the service took a key twice and __proto__, refused the byte order mark, and took an id past 2^53')
  const { operations } = await proxy.report('pets.json')
  const addPet = operations.find((o) => o.operationId === 'addPet')!
  // (Three exchanges in a row, each judged once passed on: in whatever order they are judged.)
  t.same(addPet.violations.map((v) => [v.check, v.detail.replace(/^.*?: /, '')]).sort(), [
    ['request_conformance', 'Request body has a key that would change an object\'s prototype (__proto__, constructor.prototype): Object contains forbidden prototype property'],
    ['request_conformance', 'Request body repeats a key in one object; each key may appear once']
  ], 'each request the engine refuses, named by what it breaks; no negative_data_rejection for the service that took them, no positive_data_acceptance for the one that refused a byte order mark')
  t.equal(addPet.notes.length, 3)
  for (const note of [/for a bound of its own, not the document's \(.*repeats a key.*\): whether the service took it is not judged/, /prototype.*not judged/, /byte order mark, which RFC 8259 \(8\.1\) lets a service take or refuse/]) t.ok(addPet.notes.some((n) => note.test(n)), `a note: ${note}`)
  const getPet = operations.find((o) => o.operationId === 'getPet')!
  t.same(getPet.violations.map((v) => [v.check, v.detail.replace(/^.*?: /, '')]), [['request_conformance', 'params/id must be an integer from -9007199254740991 to 9007199254740991 (one beyond would be rounded; format: int64 keeps it exact)']], 'the id named, as one the engine cannot hold exactly; no negative_data_rejection for the service that took it')
  t.match(getPet.notes, [/bound of its own, not the document's \(params\/id must be an integer from .*\): whether the service took it is not judged/])
})

t.test('a path the engine cannot decode (%zz), which it answers before any hook: passed on, and counted outside the document', async (t) => {
  const pets = await startPets(t)
  const proxy = await startProxy(t, pets.url)
  const direct = await send(pets.url, 'GET', '/pets/%zz', auth)
  t.equal((await send(proxy.url, 'GET', '/pets/%zz', auth)).status, direct.status, 'the upstream\'s answer')
  t.same((await proxy.report('pets.json')).coverage?.outside, [{ request: 'GET /pets/%zz', count: 1 }], 'the report comes, the request outside every operation')
})

t.test('bodies the engine reads itself, past Fastify\'s parsers (multipart, a GET\'s), judged from the copy the proxy kept', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Scans', version: '1.0.0' },
    paths: {
      '/scans': { post: { requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['page', 'file'], properties: { page: { type: 'integer', minimum: 1 }, file: { type: 'string', format: 'binary' } } } } } }, responses: { 201: { description: 'kept' } } } },
      '/search': { get: { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['q'], properties: { q: { type: 'string' } } } } } }, responses: { 200: { description: 'found' } } } }
    }
  }
  // A service that takes whatever it is sent.
  const upstream = createServer((req, res) => { req.resume().on('end', () => res.writeHead(req.method === 'POST' ? 201 : 200).end()) })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  const multipart = (parts: Array<[string, string, string?]>) => parts.map(([name, value, file]) => `--b\r\nContent-Disposition: form-data; name="${name}"${file === undefined ? '' : `; filename="${file}"\r\nContent-Type: application/octet-stream`}\r\n\r\n${value}\r\n`).join('') + '--b--\r\n'
  const form = { 'content-type': 'multipart/form-data; boundary=b' }
  for (const parts of [[['page', '3'], ['file', 'bytes', 'scan.png']], [['page', '0'], ['file', 'bytes', 'scan.png']], [['page', '2']]] as Array<Array<[string, string, string?]>>) await send(proxy.url, 'POST', '/scans', form, multipart(parts))
  // Node's client writes no Content-Length of its own for a GET's body.
  for (const body of ['{"q":"fern"}', '{"query":"fern"}']) await send(proxy.url, 'GET', '/search', { 'content-type': 'application/json', 'content-length': String(body.length) }, body)
  const report = await proxy.report('scans.json')
  // Each exchange is judged once its answer is passed on: two in a row may be judged, and listed, in either order.
  t.same(report.operations.map((o) => [o.method, o.path, o.violations.filter((v) => v.check === 'request_conformance').map((v) => v.detail.replace(/^.*?: /, '')).sort()]).sort(), [
    ['GET', '/search', ['body must have required property \'q\'']],
    ['POST', '/scans', ['body must have required property \'file\'', 'body/page must be >= 1']]
  ], 'each invalid request named by what breaks it; the valid multipart and GET bodies, nothing')
})

t.test('a 401 or 403 to credentials the proxy cannot check is the service\'s word on them, declared or not; to an operation that asks for none, it is judged', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths: {
      '/notes': { get: { responses: { 200: { description: 'the notes' } } } },
      '/status': { get: { security: [], responses: { 200: { description: 'up' } } } }
    }
  }
  // A service that takes one token, and refuses the rest, on /status too.
  const upstream = createServer((req, res) => { res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : req.headers.authorization === 'Bearer other-tenant' ? 403 : 401).end() })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  const statuses = []
  for (const [path, token] of [['/notes', 'good'], ['/notes', 'expired'], ['/notes', 'other-tenant'], ['/status', 'expired']]) statuses.push((await send(proxy.url, 'GET', path, { authorization: `Bearer ${token}` })).status)
  t.same(statuses, [200, 401, 403, 401])
  const report = await proxy.report('notes.json')
  t.same(report.operations.map((o) => [o.path, o.violations.map((v) => `${v.check} ${v.status}`), [...o.notes].sort()]), [
    ['/notes', [], ['answered 401 to credentials the proxy cannot check: its status not judged', 'answered 403 to credentials the proxy cannot check: its status not judged']],
    ['/status', ['status_code_conformance 401'], []]
  ], 'a token refused where the operation asks for one: noted; a 401 where it asks for none: a violation')
})

t.test('a 304 or 412 to a precondition the client sent (a browser\'s cache: If-None-Match, If-Match) is HTTP\'s own answer, declared or not; to a request without one, it is judged', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'a note', content: { 'application/json': { schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } } } } } },
        delete: { responses: { 204: { description: 'gone' } } }
      }
    }
  }
  // A service whose note has one entity tag, and which answers 304 or 412 whether asked or not.
  const upstream = createServer((req, res) => {
    const current = req.headers['if-none-match'] === '"v1"' || req.url === '/notes/2'
    const changed = (req.headers['if-match'] !== undefined && req.headers['if-match'] !== '"v1"') || req.url === '/notes/3'
    if (req.method === 'GET' || req.method === 'HEAD') res.writeHead(current ? 304 : 200, { etag: '"v1"', ...(!current && { 'content-type': 'application/json' }) }).end(current ? undefined : '{"text":"hi"}')
    else res.writeHead(changed ? 412 : 204).end()
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  const statuses = []
  for (const [method, path, headers] of [['GET', '/notes/1', {}], ['GET', '/notes/1', { 'if-none-match': '"v1"' }], ['HEAD', '/notes/1', { 'if-none-match': '"v1"' }], ['DELETE', '/notes/1', { 'if-match': '"v0"' }], ['GET', '/notes/2', {}], ['DELETE', '/notes/3', {}]] as const) {
    statuses.push((await send(proxy.url, method, path, headers)).status)
  }
  t.same(statuses, [200, 304, 304, 412, 304, 412])
  const report = await proxy.report('notes.json')
  t.same(report.operations.map((o) => [o.method, o.violations.map((v) => `${v.check} ${v.status}`).sort()]), [
    ['GET', ['status_code_conformance 304']],
    ['DELETE', ['status_code_conformance 412']]
  ], 'only the 304 and the 412 to requests that set no precondition')
  t.same(proxy.logged.map((v) => `${v.operation} ${v.detail.slice(0, 10)} ${/if-(none-)?match/i.test(v.curl)}`), ['GET /notes/{id} status 304 false', 'DELETE /notes/{id} status 412 false'], 'each logged once, none a request with a precondition')
})

t.test('an upgrade (a WebSocket\'s handshake): its switch (101) passed on, HTTP\'s own answer, and the two connections joined byte for byte; an upgrade refused passes back as it came', async (t) => {
  const document = { openapi: '3.1.0', info: { title: 'Chat', version: '1.0.0' }, paths: { '/chat': { get: { responses: { 200: { description: 'the room', content: { 'text/plain': { schema: { type: 'string' } } } } } } } } }
  // A service that speaks "echo" once switched, and refuses any other protocol.
  const upstream = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }).end('the room') })
  upstream.on('upgrade', (req, socket) => {
    if (req.headers.upgrade !== 'echo') return socket.end('HTTP/1.1 426 Upgrade Required\r\nUpgrade: echo\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nspeak echo\r\n')
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\nX-Room: 7\r\n\r\nhello\n')
    socket.on('data', (chunk: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), chunk]))).on('end', () => socket.end())
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { upstream.closeAllConnections(); return new Promise((resolve) => upstream.close(resolve)) })
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  const { port } = new URL(proxy.url)
  const upgrade = async (protocol: string) => await new Promise<{ status: number, headers: IncomingHttpHeaders, received: string }>((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: '/chat', headers: { connection: 'Upgrade', upgrade: protocol }, agent: false, signal: AbortSignal.timeout(10_000) })
    outgoing.on('upgrade', (res, socket, early) => {
      let received = early.toString()
      socket.write('hi')
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString()
        if (received.endsWith('echo:hi')) resolve({ status: res.statusCode!, headers: res.headers, received: socket.destroy() && received })
      })
    })
    outgoing.on('response', (res) => {
      let received = ''
      res.on('data', (chunk: Buffer) => { received += chunk.toString() }).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, received }))
    })
    outgoing.on('error', reject).end()
  })
  const switched = await upgrade('echo')
  t.same([switched.status, switched.headers.upgrade, switched.headers['x-room'], switched.received], [101, 'echo', '7', 'hello\nhi'.replace('hi', 'echo:hi')], 'switched, its headers as sent, then bytes both ways')
  const refused = await upgrade('chat')
  t.same([refused.status, refused.headers['content-type'], refused.received], [426, 'text/plain', 'speak echo\r\n'], 'a refusal as it came')
  t.equal((await send(proxy.url, 'GET', '/chat')).body.toString(), 'the room', 'and plain HTTP beside them')
  const report = await proxy.report('chat.json')
  t.same(report.operations.map((o) => [o.method, o.statuses, o.violations.map((v) => `${v.check} ${v.status}`)]), [['GET', { 101: 1, 426: 1, 200: 1 }, ['status_code_conformance 426']]], 'the 101 HTTP\'s own answer to an upgrade, the 426 the document\'s to judge')

  // An upstream gone: the handshake answered 502 in the document's error shape.
  const unreachable = await startProxy(t, `http://127.0.0.1:${await freePort()}`, { document })
  const bad = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port: new URL(unreachable.url).port, path: '/chat', headers: { connection: 'Upgrade', upgrade: 'echo' }, agent: false, signal: AbortSignal.timeout(10_000) }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => { body += chunk.toString() }).on('end', () => resolve({ status: res.statusCode!, body }))
    }).on('error', reject).end()
  })
  t.equal(bad.status, 502)
  t.match(bad.body, /Bad Gateway: http:\/\/127\.0\.0\.1:\d+ did not answer \(ECONNREFUSED\)/)
})

t.test('a request with a Content-Type and no body (Content-Length: 0), which Fastify reads a body of: judged, and the report comes', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes': { post: { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } }, responses: { 201: { description: 'made' }, 400: { description: 'bad' } } } },
      '/notes/{id}': { delete: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 204: { description: 'gone' } } } }
    }
  }
  const upstream = createServer((req, res) => { res.writeHead(req.method === 'POST' ? 400 : 204).end() })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => upstream.close(resolve)))
  const proxy = await startProxy(t, `http://127.0.0.1:${(upstream.address() as { port: number }).port}`, { document })
  t.equal((await send(proxy.url, 'DELETE', '/notes/1', { 'content-type': 'text/plain', 'content-length': '0' })).status, 204)
  t.equal((await send(proxy.url, 'POST', '/notes', { 'content-type': 'application/json', 'content-length': '0' })).status, 400)
  const report = await Promise.race([proxy.report('notes.json'), sleep(5_000).then(() => undefined)])
  t.same(report?.operations.map((o) => [o.method, o.violations.map((v) => `${v.check} ${v.status}: ${v.detail}`)]).sort(), [
    ['DELETE', []],
    ['POST', ['request_conformance 400: the request breaks the document (400): Request body is empty; send a JSON document']]
  ], 'within 5 s: the POST without the body it requires named, the DELETE without content taken as without a body')
})
