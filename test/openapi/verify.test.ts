import { createServer, type RequestListener } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import t, { type Test } from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { routeList } from '../../src/openapi/routes/routes.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { edgesOf } from '../../src/openapi/verify/bounds.ts'
import { judge } from '../../src/openapi/verify/checks.ts'
import { wrongCredentialsFor } from '../../src/openapi/verify/credentials.ts'
import { httpTransport } from '../../src/openapi/verify/http.ts'
import { evaluate, type Exchange } from '../../src/openapi/verify/links.ts'
import { reportOf, summaryOf } from '../../src/openapi/verify/report.ts'
import { verify, type VerifyOptions } from '../../src/openapi/verify/verifier.ts'
import { methodAnswer } from '../helpers/hand-served.ts'
import { injectTransport } from '../helpers/inject-transport.ts'
import { FAULTS, PETS, startPets, TOKEN, type Fault } from '../helpers/pets-service.ts'
import { freePort } from '../helpers/ports.ts'

// The verifier against a service written by hand (test/helpers/pets-service.ts), over real HTTP:
// kept to its document, it finds nothing; broken in one way, the check for that way names it,
// with a curl command that sends the same request and never shows the token.

/** A service of `handle` over real HTTP, closed when the test ends: its URL, and a transport's send to it. */
async function serving (t: Test, handle: RequestListener, document?: { paths?: Record<string, object> }): Promise<{ url: string, send: ReturnType<typeof httpTransport>['send'] }> {
  // With a document, routed as a framework routes it: a method none of its paths declares answered 405.
  const notAllowed = document === undefined ? () => undefined : methodAnswer(document)
  const server = createServer((req, res) => {
    const allow = notAllowed(req.method!, req.url!.split('?')[0])
    if (allow === undefined) handle(req, res)
    else res.writeHead(405, { allow }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const http = httpTransport(url, { timeoutMs: 5_000, connections: 2 })
  t.teardown(http.close)
  return { url, send: http.send }
}

/** `document` verified (seed 1, and `options`) against the project's mock of it over real HTTP. */
async function verifiedMockOverHttp (t: Test, document: object, options: Partial<VerifyOptions> = {}) {
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(document) as any }, 'document.json')
  t.teardown(() => app.close())
  const http = httpTransport(await app.listen({ port: 0, host: '127.0.0.1' }), { timeoutMs: 5_000, connections: 2 })
  t.teardown(http.close)
  return await verify(served, http.send, { seed: 1, ...options })
}

async function verified (t: Test, fault?: Fault, options: Partial<VerifyOptions> = {}) {
  const { url, requests } = await startPets(t, fault, { tooMany: options.retries429 === undefined ? 0 : 1 })
  const http = httpTransport(url, { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  const verification = await verify(structuredClone(PETS), http.send, { seed: 42, credentials: { bearer: TOKEN }, ...options })
  return { verification, report: reportOf(verification, 'pets.yaml', url), requests }
}

t.test('a service that keeps its word: every operation verified, nothing found', async (t) => {
  const { verification, report } = await verified(t)
  t.same(report.operations.map((o) => `${o.method} ${o.path}`), ['GET /pets', 'POST /pets', 'GET /pets/{id}'])
  t.same(report.operations.flatMap((o) => o.violations), [], 'no violation')
  t.equal(report.warnings, undefined, 'and no warning')
  for (const operation of verification.operations) {
    const kinds = new Set(operation.sent.map((s) => s.fault ?? s.source))
    t.ok(kinds.has('sample') && kinds.has('generated') && kinds.has('no credentials'), `${operation.method} ${operation.path}: a sample, generated values and a request without credentials (${[...kinds].join(', ')})`)
  }
  const atBounds = verification.operations.flatMap((o) => o.sent.filter((s) => s.source === 'bounds').map((s) => `${s.request.method} ${s.request.path}${s.request.body === undefined ? '' : ` ${String(s.request.body)}`}`))
  t.same(atBounds.map((sent) => sent.replace(/é{40}/, 'é * 40')), ['GET /pets?limit=100', 'POST /pets {"name":"x","tag":"string","secret":"string"}', 'POST /pets {"name":"é * 40","tag":"string","secret":"string"}'], 'the sample at its lowest and its highest bounds, where it has any: a limit at its maximum (the sample\'s is its minimum), a name at its minLength and at its maxLength, not in ASCII')
  t.same(verification.operations.flatMap((o) => o.sent.filter((s) => s.fault === 'undeclared method').map((s) => `${o.method} ${o.path}: ${s.request.method} ${s.request.path.split('?')[0]} ${s.status}`)),
    ['GET /pets: PUT /pets 405', 'GET /pets: DELETE /pets 405', 'GET /pets: PATCH /pets 405', 'GET /pets/{id}: PUT /pets/1 405', 'GET /pets/{id}: POST /pets/1 405', 'GET /pets/{id}: DELETE /pets/1 405', 'GET /pets/{id}: PATCH /pets/1 405'],
    'each method a path does not declare, sent once, by its first operation: 405')
  const faults = new Set(verification.operations.flatMap((o) => o.sent.map((s) => s.fault)).filter(Boolean))
  t.same([...faults].sort(), ['body property of the wrong type', 'body property out of its bounds', 'body without a required property', 'no credentials', 'parameter out of its bounds', 'path parameter of the wrong type', 'required query parameter missing', 'undeclared media type', 'undeclared method', 'wrong credentials'], 'each kind of invalid request the document allows')
})

for (const [fault, check] of Object.entries(FAULTS) as Array<[Fault, string]>) {
  t.test(`${fault}: found by ${check}`, async (t) => {
    const { report } = await verified(t, fault)
    const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
    const named = found.filter((v) => v.check === check)
    t.ok(named.length > 0, `${check} names it: ${JSON.stringify(found.map((v) => `${v.operation} ${v.check}: ${v.detail}`))}`)
    for (const v of named) {
      t.match(v.curl, /^curl -sS -i -X (GET|POST|PUT|DELETE|PATCH) 'http:\/\/127\.0\.0\.1:\d+\/pets/, 'a curl command to the service')
      t.notMatch(v.curl, TOKEN, 'without the token')
    }
    if (fault === 'auth ignored') t.notMatch(named[0].curl, /authorization/i, 'the request had no credentials')
    else if (fault === 'any bearer token taken') t.match(named[0].curl, '-H \'authorization: Bearer verify-token\'', 'the request had a stand-in for the token')
    else t.match(named[0].curl, '-H \'authorization: Bearer \'"$VERIFY_BEARER"', 'the token as the variable that holds it')
  })
}

t.test('text outside ASCII at a body\'s bounds, with no value drawn: a name counted in bytes, a connection cut on it', async (t) => {
  for (const [fault, check] of [['a name counted in bytes', 'positive_data_acceptance'], ['the connection cut on a name not in ASCII', 'not_a_server_error']] as const) {
    const { report } = await verified(t, fault, { generated: 0 })
    const found = report.operations.flatMap((o) => o.violations.filter((v) => v.check === check))
    t.match(found.map((v) => v.curl), [/--data-binary '\{"name":"é{40}"/], `${fault}: ${check}, at the name's maxLength`)
  }
})

t.test('a generated value an answer fails on is shrunk to the smallest that still fails', async (t) => {
  const { verification } = await verified(t, 'a valid name refused past three characters', { generated: 20 })
  const shrunk = verification.operations.flatMap((o) => o.violations).filter((v) => v.check === 'positive_data_acceptance' && v.source === 'generated')
  t.equal(shrunk.length, 1, 'one generated request kept, shrunk')
  t.equal(shrunk[0].shrunk, true)
  t.equal(JSON.parse(String(shrunk[0].request.body)).name.length, 4, 'a name of four characters: the shortest the service refuses')
  const refusals = verification.operations.flatMap((o) => o.violations).filter((v) => v.check === 'positive_data_acceptance')
  t.equal(refusals.length, 1, 'found by the sample and by generated values, reported once: by the shrunk request')
})

t.test('a run the time limit stops says so, and which operations it cut short', async (t) => {
  const { url } = await startPets(t)
  const http = httpTransport(url, { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  // Every answer 30 ms late: the deadline falls while fast-check draws values, which sends nothing after it.
  const slow = async (request: Parameters<typeof http.send>[0]) => { await new Promise((resolve) => setTimeout(resolve, 30)); return await http.send(request) }
  const verification = await verify(structuredClone(PETS), slow, { seed: 42, credentials: { bearer: TOKEN }, generated: 1000, timeLimitMs: 1500 })
  t.match(verification.stopped, /the time limit of 2 s|the time limit of 1 s/, 'the run says it stopped')
  t.ok(verification.operations.some((o) => o.notes.some((note) => /^verified in part: the run reached the time limit/.test(note))), 'and the operations it cut short say so')
  t.match(summaryOf(reportOf(verification, 'pets.yaml', url)), /Stopped at the time limit/)
})

t.test('links are followed once: what a POST added is read back by the id its answer gives', async (t) => {
  const { verification } = await verified(t)
  const linked = verification.operations.find((o) => o.operationId === 'addPet')!.sent.filter((s) => s.source === 'link')
  t.equal(linked.length, 1, 'the link followed once, from the first 201')
  t.match(linked[0], { kind: 'valid', request: { method: 'GET', path: '/pets/2' }, status: 200, from: { method: 'POST', path: '/pets', status: 201, link: 'GetAddedPet' } }, 'the first pet added is the second stored')

  // By operationRef (its braces written as in a URI), and a link to no operation of the document.
  const document = structuredClone(PETS) as any
  document.paths['/pets'].post.responses[201].links = {
    ByRef: { operationRef: '#/paths/~1pets~1%7Bid%7D/get', parameters: { id: '$response.body#/id' } },
    Nowhere: { operationId: 'deletePet' }
  }
  const { url } = await startPets(t)
  const http = httpTransport(url, { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  const added = (await verify(document, http.send, { seed: 42, credentials: { bearer: TOKEN } })).operations.find((o) => o.operationId === 'addPet')!
  t.match(added.sent.filter((s) => s.source === 'link'), [{ request: { path: '/pets/2' }, status: 200, from: { link: 'ByRef' } }])
  t.same(added.notes, ['link Nowhere of 201: deletePet is no operation verified here'])
  t.same(added.violations, [])
})

t.test('a link\'s values: constants, and runtime expressions read from the request and the answer', async (t) => {
  const parameters = routeList(structuredClone(PETS) as any).routes.find((r) => r.operationId === 'listPets')!.parameters
  const exchange: Exchange = {
    request: { method: 'GET', path: '/pets?limit=5', headers: { 'X-Trace': 'abc' } },
    parameters,
    values: { parameters: [5], body: { owner: { name: 'Ann' } } },
    answer: { status: 200, headers: { location: '/pets/7' }, body: Buffer.from('[{"id":7,"name":"Rex","a/b":{"~c":true}}]') },
    baseUrl: 'http://127.0.0.1:9/api'
  }
  const cases: Array<[unknown, unknown]> = [
    [42, 42], ['plain text', 'plain text'], [{ a: 1 }, { a: 1 }],
    ['$url', 'http://127.0.0.1:9/pets?limit=5'], ['$method', 'GET'], ['$statusCode', 200],
    ['$request.query.limit', 5], ['$request.header.x-trace', 'abc'], ['$request.body#/owner/name', 'Ann'], ['$request.body', { owner: { name: 'Ann' } }],
    ['$response.header.Location', '/pets/7'], ['$response.body#/0/id', 7], ['$response.body#/0/a~1b/~0c', true], ['$response.body#/3/id', undefined], ['$response.body#/100%', undefined],
    ['pet {$response.body#/0/id} of {$request.query.limit}', 'pet 7 of 5']
  ]
  for (const [value, expected] of cases) t.same(evaluate(value, exchange), expected, JSON.stringify(value))
})

t.test('the same seed sends the same requests; another seed, others', async (t) => {
  const sent = async (seed: number) => (await verified(t, undefined, { seed })).verification.operations.flatMap((o) => o.sent.map((s) => `${s.request.method} ${s.request.path} ${String(s.request.body)}`))
  const first = await sent(7)
  t.same(await sent(7), first)
  t.not(JSON.stringify(await sent(8)), JSON.stringify(first))
})

t.test('bounded: a 429 is waited out and sent again; --only-safe, the bound on requests', async (t) => {
  const retried = await verified(t, undefined, { retries429: 3, generated: 0, concurrency: 1 })
  t.same(retried.report.operations.flatMap((o) => o.violations), [], 'the 429 is no violation')
  t.equal(retried.requests.length, retried.verification.requests, 'the retry counted among the requests')
  t.equal(retried.verification.operations.flatMap((o) => o.sent).length + retried.verification.chains.requests + 1, retried.requests.length, 'and sent once more, not judged')

  const safe = await verified(t, 'an invalid body accepted with 2xx', { onlySafe: true })
  t.same(safe.report.operations.map((o) => `${o.method} ${o.path}`), ['GET /pets', 'GET /pets/{id}'], 'only GET, HEAD and OPTIONS')
  t.ok(safe.requests.every((r) => r.method === 'GET'), 'nothing else sent')

  const bounded = await verified(t, undefined, { maxRequests: 5, concurrency: 1 })
  t.equal(bounded.requests.length, 5, 'no more requests than the bound')
  t.match(bounded.verification.stopped, 'the bound of 5 requests')
  t.match(bounded.report.operations.at(-1)!.notes, ['not verified: the run reached the bound of 5 requests'])
})

t.test('every answer 404: a warning that the base URL may not be where the document\'s paths begin', async (t) => {
  const { url, send } = await serving(t, (_req, res) => { res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such path"}') })
  const verification = await verify({ ...structuredClone(PETS), servers: [{ url: 'https://pets.example/v1' }] }, send, { seed: 42, credentials: { bearer: TOKEN } })
  const report = reportOf(verification, 'pets.yaml', url)
  t.same(report.warnings, [`every answer was 404 (all ${verification.operations.reduce((n, o) => n + o.sent.length, 0)}): the document's paths may not begin at the base URL given (its servers: https://pets.example/v1)`])
  t.match(summaryOf(report), /\nWarning: every answer was 404 \(all \d+\): .*\(its servers: https:\/\/pets\.example\/v1\)\.\n/, 'in the summary too')
})

t.test('only to the base URL: a path that would leave it is not sent, a redirect is not followed', async (t) => {
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(req.url!)
    res.writeHead(302, { location: 'http://elsewhere.example/' }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const http = httpTransport(`http://127.0.0.1:${(server.address() as { port: number }).port}/api`, { timeoutMs: 5_000, connections: 1 })
  t.teardown(http.close)
  await t.rejects(http.send({ method: 'GET', path: '/../admin', headers: {} }), /^not sent: http:\/\/127\.0\.0\.1:\d+\/admin is outside/)
  const redirected = await http.send({ method: 'GET', path: '/pets', headers: {} })
  t.equal(redirected.status, 302, 'the redirect is the answer')
  t.same(hits, ['/api/pets'], 'one request, under the base path; none to /admin, none to where the redirect points')
})

t.test('no answer is the service failing: a connection refused, or none in time; a kept-alive connection closed under a request is tried once more', async (t) => {
  // A port nothing listens on: every request refused; the run warns that nothing answered.
  const nowhere = `http://127.0.0.1:${await freePort()}`
  const refused = httpTransport(nowhere, { timeoutMs: 5_000, connections: 2 })
  t.teardown(refused.close)
  const verification = await verify(structuredClone(PETS), refused.send, { seed: 42, credentials: { bearer: TOKEN }, generated: 1 })
  t.ok(verification.operations.every((o) => o.violations.some((v) => v.check === 'not_a_server_error' && /^no answer: connect ECONNREFUSED/.test(v.detail))), 'each operation: not_a_server_error, no answer')
  t.match(verification.warnings, [/^no request was answered \(all \d+; connect ECONNREFUSED [^)]*\): the service is not at the base URL given, or not up$/])
  t.match(summaryOf(reportOf(verification, 'pets.yaml', nowhere)), /Warning: no request was answered/)

  // An answer that never comes: bounded by the request timeout.
  const silent = createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); return new Promise((resolve) => silent.close(resolve)) })
  const waiting = httpTransport(`http://127.0.0.1:${(silent.address() as { port: number }).port}`, { timeoutMs: 200, connections: 1 })
  t.teardown(waiting.close)
  await t.rejects(waiting.send({ method: 'GET', path: '/pets', headers: {} }), /^no answer within 200 ms$/)

  // A server that answers the first request of a connection, keeps it alive, and resets it at the second: sent again on a new one.
  const connections: number[] = []
  const resetting = createNetServer((socket) => {
    let requests = 0
    connections.push(0)
    socket.on('data', (data) => {
      if (!data.toString('latin1').includes('\r\n\r\n')) return
      if (requests++ === 0) socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n[]')
      else socket.resetAndDestroy()
    })
  })
  await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => resetting.close(resolve)))
  const kept = httpTransport(`http://127.0.0.1:${(resetting.address() as { port: number }).port}`, { timeoutMs: 5_000, connections: 1 })
  t.teardown(kept.close)
  t.equal((await kept.send({ method: 'GET', path: '/pets', headers: {} })).status, 200)
  t.equal((await kept.send({ method: 'GET', path: '/pets', headers: {} })).status, 200, 'the second request answered, on a connection of its own')
  t.equal(connections.length, 2, 'two connections: the one reset, and the new one')
  // Two such connections kept alive: the request sent again meets the other, reset too; no answer, said as the socket said it.
  const twice = httpTransport(`http://127.0.0.1:${(resetting.address() as { port: number }).port}`, { timeoutMs: 5_000, connections: 2 })
  t.teardown(twice.close)
  t.same((await Promise.all([0, 1].map(() => twice.send({ method: 'GET', path: '/pets', headers: {} })))).map((answer) => answer.status), [200, 200])
  await t.rejects(twice.send({ method: 'GET', path: '/pets', headers: {} }), /ECONNRESET/, 'reset on both: the reset named')
})

t.test('a required query parameter that is also the operation\'s API key is not left out as a fault, nor sent twice: its credentials send it', async (t) => {
  // As SoundCloud's GET /connect: client_id a required parameter, and the ClientId scheme's key.
  const document = {
    openapi: '3.0.3',
    info: { title: 'Connect', version: '1.0.0' },
    components: { securitySchemes: { ClientId: { type: 'apiKey', in: 'query', name: 'client_id' } } },
    paths: { '/connect': { get: { security: [{ ClientId: [] }], parameters: [{ name: 'client_id', in: 'query', required: true, schema: { type: 'string' } }, { name: 'state', in: 'query', required: true, schema: { type: 'string' } }], responses: { 302: { description: 'to the login' }, 400: { description: 'bad' }, 401: { description: 'no key' } } } } }
  }
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'connect.json')
  t.teardown(() => app.close())
  const verification = await verify(served, injectTransport(app), { seed: 1 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [])
  t.ok(verification.operations[0].sent.some((s) => s.fault === 'required query parameter missing' && !/[?&]state=/.test(s.request.path)), 'the other required parameter left out instead')
  // As CurrencyTick's apikey: sent twice, the parameter's own value (empty, at its bounds) first, a server reads that one.
  const counts = verification.operations[0].sent.map((s) => (s.request.path.match(/[?&]client_id=/g) ?? []).length)
  t.ok(counts.every((count) => count <= 1) && counts.includes(1), 'client_id sent once where sent, as the credentials fill it')
})

t.test('a required header that is also the operation\'s API key: sent by no request without credentials, and not left out as a fault', async (t) => {
  // As VTEX's gift cards: X-VTEX-API-AppKey a required header parameter, and the appKey scheme's key.
  const document = {
    openapi: '3.0.0',
    info: { title: 'Gift cards', version: '1.0.0' },
    components: { securitySchemes: { appKey: { type: 'apiKey', in: 'header', name: 'X-VTEX-API-AppKey' } } },
    security: [{ appKey: [] }],
    paths: { '/giftcards/{id}': { delete: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'X-VTEX-API-AppKey', in: 'header', required: true, schema: { type: 'string' }, example: '{{X-VTEX-API-AppKey}}' }, { name: 'X-Store', in: 'header', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'gone' }, 400: { description: 'bad' }, 401: { description: 'no key' } } } } }
  }
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'giftcards.json')
  t.teardown(() => app.close())
  const verification = await verify(served, injectTransport(app), { seed: 1 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [])
  const sent = verification.operations[0].sent
  t.ok(sent.some((s) => s.fault === 'no credentials' && !('x-vtex-api-appkey' in s.request.headers)), 'no credentials: without the header that carries them')
  t.ok(sent.some((s) => s.fault === 'required header missing' && !('x-store' in s.request.headers) && 'x-vtex-api-appkey' in s.request.headers), 'the other required header left out instead')
})

t.test('a valid request refused for data that is not there is told apart from one refused for what it holds', async (t) => {
  const document = structuredClone(PETS) as any
  const route = routeList(document).routes.find((r) => r.operationId === 'addPet')!
  const judged = judge(document, route, createValidators(document), new Set(['positive_data_acceptance']))
  const refused = (message: string) => judged({ source: 'sample' }, { status: 400, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ message })) })[0].detail
  t.match(refused('Owner 7 not found'), /^a valid request \(sample\) refused with 400 \(the answer says what it names does not exist: valid, but about data that is not there; make it first, or send what exists\): /)
  t.match(refused('no such shelter'), 'does not exist')
  t.match(refused('names are short here'), /^a valid request \(sample\) refused with 400: "/, 'a refusal for what the request holds says nothing of the kind')
})

t.test('a valid request refused by an operation that declares no success (contract-p\'s stats: 400 and 403 alone): no promise broken; one that declares a success, found', async (t) => {
  const document = { openapi: '3.0.3', info: { title: 'Stats', version: '1.0.0' }, paths: { '/stats': { get: { responses: { 400: { description: 'Not Supported' }, 403: { description: 'Permission insufficient' } } } }, '/volume': { get: { responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } } } } as any
  const { routes } = routeList(document)
  const refusal = { status: 400, headers: {}, body: Buffer.from('') }
  const checks = (operation: string) => judge(document, routes.find((r) => r.path === operation)!, createValidators(document), new Set(['positive_data_acceptance']))({ source: 'sample' }, refusal).map((v) => v.check)
  t.same(checks('/stats'), [], 'a refusal is all it declares')
  t.same(checks('/volume'), ['positive_data_acceptance'])
})

t.test('a form or multipart body is called valid only as the engine reads it back: no empty list in parts, no list as a whole form', async (t) => {
  // As EVE Marketer's POST /marketstat (a required list of ids, in multipart) and AGCO's IQA codes (a list of text, as JSON and as a form).
  const codes = { type: 'array', items: { type: 'string' } }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Forms', version: '1.0.0' },
    paths: {
      '/stats': { post: { requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['typeid'], properties: { typeid: { type: 'array', items: { type: 'integer' } }, region: { type: 'integer' } } } } } }, responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } },
      '/codes': { put: { requestBody: { required: true, content: { 'application/json': { schema: codes }, 'application/x-www-form-urlencoded': { schema: codes } } }, responses: { 204: { description: 'kept' }, 400: { description: 'bad' } } } }
    }
  }
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'forms.json')
  t.teardown(() => app.close())
  const verification = await verify(served, injectTransport(app), { seed: 1, generated: 40 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`)), [], 'the engine accepts every request the verifier calls valid')
  const stats = verification.operations.find((o) => o.path === '/stats')!
  t.ok(stats.sent.filter((s) => s.kind === 'valid' && s.source === 'generated').length > 10, 'generated bodies sent all the same, each with an id')
  t.notOk(verification.operations.find((o) => o.path === '/codes')!.sent.some((s) => s.kind === 'valid' && /form-urlencoded/.test(s.request.headers['content-type'] ?? '')), 'no list sent as a whole form')
})

t.test('values at and past their bounds, for each keyword, in 3.0 and 3.1: the engine takes each one at its bounds and refuses each one past them', async (t) => {
  const properties = {
    size: { type: 'integer', minimum: 2, maximum: 40, multipleOf: 2 },
    code: { type: 'string', minLength: 3, maxLength: 5 },
    kind: { type: 'string', enum: ['a', 'b'] },
    day: { type: 'string', format: 'date' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
    ids: { type: 'array', items: { type: 'integer' }, uniqueItems: true },
    // Within: an object's properties, a list's item's.
    owner: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 4 } } },
    lines: { type: 'array', maxItems: 2, items: { type: 'object', required: ['sku'], additionalProperties: false, properties: { sku: { type: 'string', pattern: '^[A-Z]{3}$' }, qty: { type: 'integer', minimum: 1, maximum: 9 } } } }
  }
  const bounded = (version: string, exclusive: (bound: number) => object) => ({
    openapi: version,
    info: { title: 'Bounds', version: '1.0.0' },
    paths: {
      '/items': {
        post: {
          parameters: [{ name: 'page', in: 'query', schema: { type: 'integer', ...exclusive(10) } }],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['size'], properties, additionalProperties: false } } } },
          responses: { 201: { description: 'made' }, 400: { description: 'bad' } }
        }
      }
    }
  })
  const exclusive30 = (bound: number) => ({ minimum: 0, exclusiveMinimum: true, maximum: bound, exclusiveMaximum: true })
  const exclusive31 = (bound: number) => ({ exclusiveMinimum: 0, exclusiveMaximum: bound })
  for (const [version, exclusive] of [['3.0.3', exclusive30], ['3.1.0', exclusive31]] as const) {
    const { app, document } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: bounded(version, exclusive) }, 'bounds.json')
    const verification = await verify(document, injectTransport(app), { seed: 1, generated: 0 })
    await app.close()
    const sent = verification.operations[0].sent
    t.same(verification.operations[0].violations, [], `${version}: nothing found against the mock`)
    t.same(sent.filter((s) => s.source === 'bounds').map((s) => `${s.request.path} ${String(s.request.body)} ${s.status}`), [
      '/items?page=1 {"size":2,"code":"xxx","kind":"a","day":"2019-08-24","tags":["string"],"ids":[0],"owner":{"name":"stri"},"lines":[{"sku":"AAA","qty":1}]} 201',
      // Not a line's qty at its highest too: the list of lines is at its own.
      '/items?page=9 {"size":40,"code":"ééééé","kind":"a","day":"2019-08-24","tags":["string","string","string"],"ids":[0],"owner":{"name":"éééé"},"lines":[{"sku":"AAA","qty":1},{"sku":"AAA","qty":1}]} 201'
    ], `${version}: the lowest and the highest, exclusive bounds one step in, taken`)
    // Each value's first keyword, then each one's second, up to 16: a line's additionalProperties, and the second keywords after it, left out.
    t.same(sent.filter((s) => s.fault?.endsWith('out of its bounds') === true).map((s) => `${s.breaks} ${s.status}`), [
      'page exclusiveMaximum 400', 'body additionalProperties (unexpected) 400', 'size maximum 400', 'code maxLength 400', 'kind enum 400', 'day format date 400',
      'tags maxItems 400', 'ids uniqueItems 400', 'owner required (name) 400', 'lines maxItems 400', 'owner.name maxLength 400', 'lines[0] required (sku) 400',
      'lines[0].sku pattern 400', 'lines[0].qty maximum 400', 'page exclusiveMinimum 400', 'size minimum 400'
    ], `${version}: a value past each keyword of each, within the body too, each refused by the mock`)

    // Each keyword's value past it, refused by the engine's own validator of the property (a 3.0 document is read upgraded, its exclusive bounds numbers).
    const validators = createValidators(document)
    const page = (document.paths['/items'] as any).post.parameters[0].schema
    const breaking = [['page', page, 5], ...Object.entries((document.paths['/items'] as any).post.requestBody.content['application/json'].schema.properties)
      .map(([name, schema]: [string, any]) => [name, schema, { size: 10, code: 'abcd', kind: 'a', day: '2026-11-29', tags: ['t'], ids: [1, 2] }[name]])] as Array<[string, object, unknown]>
    const broken: string[] = []
    for (const [name, schema, valid] of breaking) {
      const validate = validators.request(schema)
      for (const { value, breaks } of edgesOf(document, schema, valid).beyond) {
        t.notOk(validate(value), `${version} ${name}: ${JSON.stringify(value)} refused (${breaks})`)
        broken.push(`${name} ${breaks}`)
      }
    }
    t.same(broken, ['page exclusiveMaximum', 'page exclusiveMinimum', 'size maximum', 'size minimum', 'size multipleOf', 'code maxLength', 'code minLength', 'kind enum', 'day format date', 'tags maxItems', 'tags minItems', 'ids uniqueItems'], `${version}: a value past each keyword`)
  }

  // A service off by one at one bound (and that checks nothing else): the request with every value at its highest is refused, and shown by that value alone.
  const { send } = await serving(t, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
      const refused = JSON.parse(Buffer.concat(chunks).toString()).size === 40
      res.writeHead(refused ? 400 : 201).end()
    })
  }, bounded('3.1.0', exclusive31))
  const violations = (await verify(bounded('3.1.0', exclusive31) as any, send, { seed: 1, generated: 0 })).operations[0].violations
  // It takes every value past a bound: each one named, within the body too.
  t.match(violations.filter((v) => v.check === 'negative_data_rejection').map((v) => v.detail).join('\n'), /body property out of its bounds, lines\[0\]\.sku pattern\) accepted with 201/, 'a value past its bound within the body, taken')
  const found = violations.filter((v) => v.check === 'positive_data_acceptance')
  t.same(found.map((v) => [v.check, v.source, v.shrunk]), [['positive_data_acceptance', 'bounds', true]], 'once, narrowed')
  const body = JSON.parse(String(found[0].request.body))
  t.equal(body.size, 40, `by the size at its maximum: ${JSON.stringify(body)}`)
  t.equal(body.tags.length, 1, 'and nothing else at its highest')
})

t.test('a method another path declares for the URL sent (GitLab\'s PUT /services/asana, beside GET and DELETE /services/{slug}, its slug asana): not sent as undeclared, to either path; the mock, nothing found', async (t) => {
  const slug = { name: 'slug', in: 'path', required: true, schema: { type: 'string', enum: ['asana', 'bamboo'] } }
  const services = { openapi: '3.1.0', info: { title: 'Services', version: '1.0.0' }, paths: { '/services/asana': { put: { responses: { 200: { description: 'set' } } } }, '/services/{slug}': { get: { parameters: [slug], responses: { 200: { description: 'it' }, 400: { description: 'bad' } } }, delete: { parameters: [slug], responses: { 204: { description: 'gone' }, 400: { description: 'bad' } } } } } }
  const verification = await verifiedMockOverHttp(t, services, { generated: 0 })
  t.same(verification.operations.flatMap((o) => o.violations), [], 'nothing found')
  t.same(verification.operations.flatMap((o) => o.sent.filter((s) => s.fault === 'undeclared method').map((s) => `${s.request.method} ${s.request.path} ${s.status}`)),
    ['POST /services/asana 405', 'PATCH /services/asana 405', 'POST /services/asana 405', 'PATCH /services/asana 405'], 'each path\'s methods that no operation declares for its URL: not PUT, nor GET and DELETE, which /services/{slug} declares')
})

t.test('a multipart list at a maxItems of 1,000 (restful4up\'s strings to ignore), a part an item: its highest bound not sent, which the engine refuses before reading it; the mock, nothing found', async (t) => {
  const upload = {
    openapi: '3.0.3',
    info: { title: 'Rules', version: '1.0.0' },
    paths: {
      '/rules': {
        post: {
          requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, ignore: { type: 'array', maxItems: 1000, items: { type: 'string' } } } } } } },
          responses: { 200: { description: 'the rules' }, 400: { description: 'bad' } }
        }
      }
    }
  }
  const verification = await verifiedMockOverHttp(t, upload, { generated: 0 })
  t.same(verification.operations[0].violations, [], 'nothing found')
  const parts = verification.operations[0].sent.filter((s) => s.kind === 'valid').map((s) => String(s.request.body).split('name="ignore"').length - 1)
  t.ok(parts.length > 0 && parts.every((count) => count < 1000), `no valid body of 1,000 items sent (their counts: ${parts.join(', ')})`)
})

t.test('a list parameter\'s items past their bounds: an enum of statuses to filter by, its first item not one of them', async (t) => {
  const filtered = {
    openapi: '3.1.0',
    info: { title: 'Orders', version: '1.0.0' },
    paths: { '/orders': { get: { parameters: [{ name: 'status', in: 'query', schema: { type: 'array', items: { type: 'string', enum: ['open', 'shipped'] } } }], responses: { 200: { description: 'the orders' }, 400: { description: 'bad' } } } } }
  }
  const { app, document } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(filtered) }, 'orders.json')
  t.teardown(() => app.close())
  const mocked = await verify(document, injectTransport(app), { seed: 1, generated: 0 })
  t.same(mocked.operations[0].violations, [], 'the mock refuses it')
  t.match(mocked.operations[0].sent.filter((s) => s.breaks !== undefined).map((s) => `${s.breaks} ${s.request.path} ${s.status}`), [/^status\[0\] enum \/orders\?status=not-one-of-its-values 400$/], 'sent, named by its place')
  // A service that filters by what it knows and ignores the rest takes it.
  const { send } = await serving(t, (_req, res) => { res.writeHead(200).end() }, filtered)
  const found = (await verify(structuredClone(filtered) as any, send, { seed: 1, generated: 0 })).operations[0].violations
  t.same(found.map((v) => v.detail), ['an invalid request (parameter out of its bounds, status[0] enum) accepted with 200'])
})

t.test('a body composed with allOf, one part requiring what another declares: sent without it, and with it of the wrong type', async (t) => {
  const composed = {
    openapi: '3.0.3',
    info: { title: 'Tasks', version: '1.0.0' },
    components: { schemas: { Due: { type: 'object', properties: { day: { type: 'string' } } }, Named: { type: 'object', properties: { title: { type: 'string' }, due: { $ref: '#/components/schemas/Due' } } } } },
    paths: {
      '/tasks': {
        post: {
          requestBody: { required: true, content: { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Named' }, { required: ['title', 'due'], properties: { due: { allOf: [{ $ref: '#/components/schemas/Due' }, { required: ['day'] }] } } }] } } } },
          responses: { 201: { description: 'made' }, 400: { description: 'bad' } }
        }
      }
    }
  }
  const { app, document } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(composed) }, 'tasks.json')
  t.teardown(() => app.close())
  const mocked = await verify(document, injectTransport(app), { seed: 1, generated: 0 })
  t.same(mocked.operations[0].violations, [], 'the mock refuses each')
  t.same(mocked.operations[0].sent.filter((s) => s.status === 400).map((s) => s.breaks ?? s.fault), ['body without a required property', 'body property of the wrong type', 'due required (day)'], 'each sent')
  // A service that takes any JSON takes them.
  const { send } = await serving(t, (_req, res) => { res.writeHead(201).end() }, composed)
  const found = (await verify(structuredClone(composed) as any, send, { seed: 1, generated: 0 })).operations[0].violations
  t.match(found.map((v) => v.detail), [/without a required property/, /of the wrong type/, /due required \(day\)/])
})

t.test('integers of format int32 are drawn within its range: as many generated requests sent as asked, none the engine would refuse', async (t) => {
  const counts = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((name, i) => [name, { type: 'integer', format: 'int32', ...(i % 2 === 0 && { minimum: 1 }) }]))
  const document = { openapi: '3.1.0', info: { title: 'Counts', version: '1.0.0' }, paths: { '/counts': { post: { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: Object.keys(counts), properties: counts } } } }, responses: { 204: { description: 'kept' } } } } } }
  const { send } = await serving(t, (_req, res) => { res.writeHead(204).end() }, document)
  const { sent } = (await verify(document as any, send, { seed: 3, generated: 10 })).operations[0]
  const generated = sent.filter((s) => s.source === 'generated').map((s) => Object.values(JSON.parse(String(s.request.body))) as number[])
  t.equal(generated.length, 10, 'ten drawn, ten sent (six int32s each, drawn past their range half the time, left one in 64 valid)')
  t.ok(generated.flat().every((n) => n >= -(2 ** 31) && n < 2 ** 31), 'every one within int32')
})

t.test('credentials that are not the ones given: each scheme\'s stand-in, the user\'s other headers kept; none where nothing of the user\'s would be left out', async (t) => {
  const document = structuredClone(PETS) as any
  const route = routeList(document).routes.find((r) => r.operationId === 'listPets')!
  const wrong = (given: Parameters<typeof wrongCredentialsFor>[2]) => wrongCredentialsFor(document, route, given)?.headers
  t.same(wrong({ bearer: TOKEN, headers: { 'X-Tenant': 'blue', 'X-Api-Key': 'k-123' } }), { authorization: 'Bearer verify-token', 'x-tenant': 'blue' }, 'the token and a key of the user\'s own left out, the tenant kept')
  t.same(wrong({ headers: { Authorization: `Bearer ${TOKEN}` } }), { authorization: 'Bearer verify-token' }, 'a token given as a header of the user\'s own')
  t.same(wrong({ bearer: TOKEN, headers: { Cookie: 'session=s-123' } }), { authorization: 'Bearer verify-token' }, 'a session cookie left out too')
  t.equal(wrong({ headers: { 'X-Tenant': 'blue' } }), undefined, 'nothing of the user\'s is a credential')
  t.equal(wrong({}), undefined, 'nothing given: the stand-ins are what every request carries')
  t.equal(wrong({ bearer: 'verify-token' }), undefined, 'a token that is the stand-in itself')
})

t.test('a form\'s fields at and past their bounds, read as the engine reads a form: the mock takes each at its bounds and refuses each past them', async (t) => {
  const form = { type: 'object', required: ['qty'], properties: { qty: { type: 'integer', minimum: 1, maximum: 9 }, note: { type: 'string', maxLength: 4 } } }
  const document = { openapi: '3.1.0', info: { title: 'Forms', version: '1.0.0' }, paths: { '/orders': { post: { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: form } } }, responses: { 201: { description: 'made' }, 400: { description: 'bad' } } } } } }
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'forms.json')
  t.teardown(() => app.close())
  const { operations: [orders] } = await verify(served, injectTransport(app), { seed: 1, generated: 0 })
  t.same(orders.violations, [], 'nothing found against the mock')
  t.same(orders.sent.filter((s) => s.source === 'bounds').map((s) => `${String(s.request.body)} ${s.status}`), ['qty=9&note=%C3%A9%C3%A9%C3%A9%C3%A9 201'], 'at the highest (the sample is at the lowest already), the note in UTF-8')
  t.same(orders.sent.filter((s) => s.breaks !== undefined).map((s) => `${s.breaks} ${String(s.request.body)} ${s.status}`), ['qty maximum qty=10&note=stri 400', 'note maxLength qty=1&note=xxxxx 400', 'qty minimum qty=0&note=stri 400'], 'past them, as form fields, refused')
})

t.test('a header given by content (JSON, as Apideck\'s x-apideck-metadata): text outside ASCII sent escaped (\\u0100), which a header can carry, and each taken', async (t) => {
  const metadata = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, parent: { type: 'string' } } }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Files', version: '1.0.0' },
    paths: { '/files': { get: { parameters: [{ name: 'x-metadata', in: 'header', required: true, content: { 'application/json': { schema: metadata } } }], responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } } }
  }
  const verification = await verifiedMockOverHttp(t, document, { generated: 40 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'every request sent, none refused')
  const headers = verification.operations[0].sent.filter((s) => s.kind === 'valid').map((s) => s.request.headers['x-metadata'])
  t.ok(headers.some((header) => /\\u[0-9a-f]{4}/.test(header ?? '')), 'some with text outside ASCII, escaped')
  t.ok(headers.every((header) => /^[\x20-\x7e]*$/.test(header ?? '')), 'each header ASCII')
})

t.test('a path parameter given by content of a type no JSON (Telnyx\'s ids, `*/*`): sent as its text, as the engine reads it; in JSON, as JSON text', async (t) => {
  const id = (type: string) => [{ name: 'id', in: 'path', required: true, content: { [type]: { schema: { type: 'string', format: 'uuid' } } } }]
  const document = {
    openapi: '3.0.3',
    info: { title: 'Reports', version: '1.0.0' },
    paths: {
      '/reports/{id}': { get: { parameters: id('*/*'), responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } },
      '/runs/{id}': { get: { parameters: id('application/json'), responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } }
    }
  }
  const verification = await verifiedMockOverHttp(t, document, { generated: 5 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  const valid = (path: string) => verification.operations.find((o) => o.path === path)!.sent.filter((s) => s.kind === 'valid')
  t.ok(valid('/reports/{id}').length > 0 && valid('/reports/{id}').every((s) => /^\/reports\/[0-9a-f-]{36}$/.test(s.request.path) && s.status === 200), 'a report\'s id as itself, taken')
  t.ok(valid('/runs/{id}').length > 0 && valid('/runs/{id}').every((s) => /^\/runs\/%22[0-9a-f-]{36}%22$/.test(s.request.path) && s.status === 200), 'a run\'s as JSON text, taken')
})

t.test('the project\'s own document, mocked: nothing found, its refusals carrying the Cache-Control its errors require', async (t) => {
  const { document } = await loadDocument()
  const verification = await verifiedMockOverHttp(t, document)
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  const refused = verification.operations.flatMap((o) => o.sent.map((s) => s.status)).filter((status) => status !== undefined && status >= 400)
  t.ok([400, 401, 415].every((status) => refused.includes(status)), `refused for its body, its credentials and its media type, each answered as its error declares (${[...new Set(refused)].join(', ')})`)
})

t.test('a body without a property its others require (3.1\'s dependentRequired, an if\'s then): sent, refused by the mock, found where taken', async (t) => {
  const body = (schema: object) => ({
    openapi: '3.1.0',
    info: { title: 'Tasks', version: '1.0.0' },
    paths: { '/tasks': { post: { requestBody: { required: true, content: { 'application/json': { schema } } }, responses: { 201: { description: 'made' }, 400: { description: 'bad' } } } } }
  })
  const documents = {
    dependentRequired: body({ type: 'object', required: ['title'], properties: { title: { type: 'string' }, due: { type: 'string', format: 'date' }, zone: { enum: ['UTC', 'Europe/Paris'] } }, dependentRequired: { due: ['zone'] } }),
    'if and then': body({ type: 'object', required: ['title', 'status'], properties: { title: { type: 'string' }, status: { enum: ['done', 'todo'] }, doneAt: { type: 'string', format: 'date-time' } }, if: { properties: { status: { const: 'done' } } }, then: { required: ['doneAt'] }, else: { not: { required: ['doneAt'] } } })
  }
  for (const [named, document] of Object.entries(documents)) {
    const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(document) }, 'tasks.json')
    t.teardown(() => app.close())
    const mocked = await verify(served, injectTransport(app), { seed: 1, generated: 0 })
    t.same(mocked.operations[0].violations, [], `${named}: the mock refuses it`)
    t.ok(mocked.operations[0].sent.some((s) => s.fault === 'body without a property its others require' && s.status === 400), `${named}: sent`)
    // A service that takes any JSON takes it.
    const { send } = await serving(t, (_req, res) => { res.writeHead(201).end() }, document)
    const found = (await verify(structuredClone(document) as any, send, { seed: 1, generated: 0 })).operations[0].violations
    t.ok(found.some((v) => v.detail === 'an invalid request (body without a property its others require) accepted with 201'), `${named}: found`)
  }
})

t.test('a header\'s value as HTTP carries it, without the spaces about it: a pattern that leaves a character open sampled with no space; one that ends in a space, no valid request, so none refused', async (t) => {
  const header = (pattern: string) => [{ name: 'X-Bearer', in: 'header', required: true, schema: { type: 'string', pattern } }]
  const document = {
    openapi: '3.1.0',
    info: { title: 'Headers', version: '1.0.0' },
    paths: {
      // As Amazon Chime's x-amz-chime-bearer: an ARN whose last part begins with any character but a slash.
      '/open': { get: { parameters: header('^arn:[a-z]{0,3}:[^/].{0,10}$'), responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } },
      '/spaced': { get: { parameters: header('^x[ ]$'), responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } }
    }
  }
  const { send } = await serving(t, (req, res) => {
    const pattern = new RegExp(document.paths[req.url as '/open' | '/spaced'].get.parameters[0].schema.pattern)
    res.writeHead(pattern.test(String(req.headers['x-bearer'])) ? 200 : 400).end()
  }, document)
  const verification = await verify(structuredClone(document) as any, send, { seed: 42 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${o.path} ${v.check}: ${v.detail}`)), [], 'no valid request refused')
  const [open, spaced] = verification.operations
  t.ok(open.sent.some((s) => s.kind === 'valid' && s.status === 200), 'the open one verified with a value the service takes')
  t.match(spaced.notes.join('\n'), /no valid request could be made: the engine reads the sample otherwise: headers\/x-bearer must match pattern/, 'the spaced one: none sent as valid, and a note says why')
})

t.test('an answer\'s integers past 2^53: an int64 read exactly, and a plain integer so large (NetBox\'s bounds, ±2^63) taken as the integer it is, in a number too: valid; past its bounds still found', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Circuits', version: '1.0.0' },
    paths: { '/circuits/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'a circuit', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'integer', format: 'int64' }, identifier: { type: ['integer', 'null'], minimum: -(2 ** 63), maximum: 2 ** 63 }, x: { type: 'number', format: 'double' } } } } } } } } } }
  }
  const route = routeList(document as any).routes[0]
  const judged = judge(document as any, route, createValidators(document as any), new Set(['response_schema_conformance']))
  const answered = (body: string) => judged({ source: 'sample' }, { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) }).map((v) => v.detail)
  t.same(answered('{"id":1152921504606846977,"identifier":9223372036854775807,"x":-91174141133075340}'), [], 'each valid, and a double that is a large integer (EVE Online\'s positions)')
  t.same(answered('{"x":1.5}'), [], 'a double')
  t.match(answered('{"identifier":1.5}'), [/\/identifier must be integer/], 'a fraction where an integer is declared: found')
  t.same(answered('{"id":1152921504606846977,"identifier":null}'), [], 'the int64 alone')
  t.match(answered('{"id":1152921504606846977,"identifier":1e30}'), [/the body breaks its schema: \/identifier must be <= 922337203685477\d{4}$/], 'a plain integer past its maximum: found')
})

t.test('an operation that answers only 101 (a WebSocket handshake) is left out, saying why; the project\'s mock answers none of its requests 101', async (t) => {
  // As edrv.io's GET /v1/realtime.
  const document = {
    openapi: '3.0.3',
    info: { title: 'Realtime', version: '1.0.0' },
    paths: {
      '/realtime': { get: { parameters: [{ name: 'sec-websocket-protocol', in: 'header', required: true, schema: { type: 'string' } }], responses: { 101: { description: 'Upgrade connection' } } } },
      '/events': { get: { responses: { 101: { description: 'Upgrade connection' }, 200: { description: 'the events so far' } } } }
    }
  }
  const { app, document: served } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'realtime.json')
  t.teardown(() => app.close())
  const statuses = await Promise.all([{}, { prefer: 'code=101' }].map(async (asked) => (await app.inject({ url: '/realtime', headers: { 'sec-websocket-protocol': 'jwt', ...asked } })).statusCode))
  t.notOk(statuses.includes(101), `the mock switches no protocol: ${statuses.join(', ')}`)
  t.equal((await app.inject({ url: '/events' })).statusCode, 200, 'where a 200 is declared beside it, that')
  const verification = await verify(served, injectTransport(app), { seed: 1 })
  t.same(verification.refused.map((r) => `${r.operation}: ${r.problem}`), ['GET /realtime: answers only 101, switching protocols (a WebSocket handshake): HTTP requests alone do not verify it'])
  t.same(verification.operations.map((o) => `${o.method} ${o.path} ${o.violations.length}`), ['GET /events 0'], 'the other verified, nothing found')
})

t.test('a credential in a header whose name no request can carry (RapidAPI\'s "ADVICEment API Key"): not sent, and no failure of the service\'s', async (t) => {
  const document = {
    openapi: '3.0.3',
    info: { title: 'Templates', version: '1.0.0' },
    components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'ADVICEment API Key' } } },
    security: [{ key: [] }],
    paths: { '/templates': { get: { responses: { 200: { description: 'ok' }, 401: { description: 'no key' } } } } }
  }
  const verification = await verifiedMockOverHttp(t, document)
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  const unsent = verification.operations[0].sent.filter((s) => s.error !== undefined).map((s) => s.error)
  t.ok(unsent.length > 0 && unsent.every((error) => /^not sent: Header name must be a valid HTTP token/.test(error ?? '')), `the requests with the key named as not sent: ${unsent[0]}`)
})

t.test('a sample whose optional query parameters together pass what servers take (GSMtasks\' lists: some 900 filters): sent without them, not refused 431 before the API sees it', async (t) => {
  const filters = Array.from({ length: 600 }, (_, i) => ({ name: `address__apartment_number_${i}__icontains`, in: 'query', schema: { type: 'string' } }))
  const document = { openapi: '3.0.3', info: { title: 'Tasks', version: '1.0.0' }, paths: { '/tasks/': { get: { parameters: [{ name: 'page', in: 'query', required: true, schema: { type: 'integer', minimum: 1 } }, ...filters], responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } } } }
  const verification = await verifiedMockOverHttp(t, document)
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  const sample = verification.operations[0].sent.find((s) => s.source === 'sample' && s.kind === 'valid')
  t.match(sample?.request.path, /^\/tasks\/\?page=1$/, 'the sample with what is required alone')
})

t.test('an optional parameter no value of which is valid (data2crm\'s dates, their pattern written between slashes): the operation verified without it, not left out', async (t) => {
  const since = { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time', pattern: '/^\\d{4}-\\d{2}-\\d{2}T.*$/' } }
  const document = { openapi: '3.0.0', info: { title: 'Accounts', version: '1.0.0' }, paths: { '/accounts/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }, since], responses: { 200: { description: 'ok' }, 400: { description: 'bad' } } } } } }
  const verification = await verifiedMockOverHttp(t, document)
  const [read] = verification.operations
  t.same(read.violations.map((v) => `${v.check}: ${v.detail}`), [], 'nothing found')
  t.notMatch(read.notes.join('\n'), /no valid request could be made/, 'not left out')
  t.ok(read.sent.some((s) => s.kind === 'valid' && s.source === 'sample' && /^\/accounts\/-?\d+$/.test(s.request.path) && s.status === 200), 'its sample sent without the parameter, and answered 200')
})

t.test('a body example nested past the JSON parser\'s 32 levels (as Azure\'s application gateways reach): not sent as valid, and the run goes on', async (t) => {
  let deep: object = { leaf: true }
  for (let i = 0; i < 40; i++) deep = { in: deep }
  const document = { openapi: '3.0.3', info: { title: 'Gateways', version: '1.0.0' }, paths: { '/gateways': { post: { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' }, example: deep } } }, responses: { 201: { description: 'made' }, 400: { description: 'bad' } } } } } }
  const verification = await verifiedMockOverHttp(t, document)
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  t.notOk(verification.operations[0].sent.some((s) => s.source === 'example'), 'the example not sent as a valid request')
  t.ok(verification.operations[0].sent.some((s) => s.source === 'sample' && s.status === 201), 'the sample sent, and taken')
})

t.test('objects drawn as plain JSON objects: a read-back list of unique objects (Mist\'s RADIUS servers) is compared, and the run does not stop', async (t) => {
  // fast-check draws objects without a prototype by default; Ajv's deep equality, for uniqueItems, calls their valueOf.
  const server = { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } }
  const radius = { type: 'object', required: ['id'], properties: { id: { type: 'integer', readOnly: true }, servers: { type: 'array', uniqueItems: true, minItems: 4, items: server } } }
  const json = { content: { 'application/json': { schema: radius } } }
  const document = {
    openapi: '3.1.0',
    info: { title: 'RADIUS', version: '1.0.0' },
    paths: {
      '/radius': { post: { requestBody: { required: true, ...json }, responses: { 201: { description: 'made', ...json } } } },
      '/radius/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'it', ...json }, 404: { description: 'none' } } },
        put: { requestBody: { required: true, ...json }, responses: { 200: { description: 'replaced', ...json }, 404: { description: 'none' } } }
      }
    }
  }
  const verification = await verifiedMockOverHttp(t, document, { generated: 20 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  t.ok(verification.chains.requests > 0, `sequences run (${verification.chains.requests} requests)`)
})

t.test('a multipart body whose properties an allOf gathers (PeerTube\'s upload): each text sent as a field, not as a file of its bytes; nothing found', async (t) => {
  const fields = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 5 }, tags: { type: 'array', items: { type: 'string', maxLength: 3 } } } }
  const schema = { allOf: [fields, { type: 'object', required: ['video'], properties: { video: { type: 'string', format: 'binary' } } }] }
  const document = { openapi: '3.1.0', info: { title: 'Videos', version: '1.0.0' }, paths: { '/videos': { post: { requestBody: { required: true, content: { 'multipart/form-data': { schema } } }, responses: { 200: { description: 'uploaded' }, 400: { description: 'bad' } } } } } }
  const verification = await verifiedMockOverHttp(t, document, { generated: 20 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found')
  const sent = verification.operations[0].sent.filter((s) => s.kind === 'valid').map((s) => String(s.request.body))
  t.ok(sent.some((body) => /name="name"\r\n\r\n/.test(body)), 'the name sent as a field')
})

t.test('a writeOnly property of a branch the answer does not pass (GSMtasks\' user: a oneOf of its create, with a writeOnly password, and its update, without): no finding; of a branch it passes, found; the mock, nothing found', async (t) => {
  const create = { type: 'object', required: ['email'], properties: { email: { type: 'string' }, password: { type: 'string', writeOnly: true } } }
  const update = { type: 'object', required: ['email'], properties: { email: { type: 'string' } } }
  const read = (schema: object) => ({ get: { responses: { 200: { description: 'a user', content: { 'application/json': { schema } } } } } })
  const document = { openapi: '3.1.0', info: { title: 'Users', version: '1.0.0' }, paths: { '/one': read({ oneOf: [create, update] }), '/any': read({ anyOf: [create, update] }) } }
  const answered = (path: string, body: object) => judge(document as any, routeList(document as any).routes.find((r) => r.path === path)!, createValidators(document as any), new Set(['response_schema_conformance']))({ source: 'sample' }, { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) }).map((v) => v.detail)
  t.same(answered('/one', { email: 'a@example.com', password: null }), [], 'a password no string: the update alone, which marks nothing writeOnly')
  t.same(answered('/any', { email: 'a@example.com', password: null }), [], 'so in an anyOf')
  t.same(answered('/any', { email: 'a@example.com', password: 'secret' }), ['200 application/json: /password is writeOnly, never to be sent'], 'a password the create takes: its writeOnly holds')
  const verification = await verifiedMockOverHttp(t, document, { generated: 0 })
  t.same(verification.operations.flatMap((o) => o.violations), [], 'the mock: nothing found')
})
