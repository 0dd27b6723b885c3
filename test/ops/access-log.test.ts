import t from 'tap'
import { buildTestApp, captureLog, testConfig, TOKEN } from '../helpers/app.ts'

// What an operator reads: one JSON line per request, keyed by a request id that follows the
// request from the client or load balancer, over real HTTP.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function logged (t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) {
  const { logStream, lines, raw } = captureLog()
  const app = await buildTestApp(t, await testConfig(t, { LOG_LEVEL: 'info', ...env }), { logStream })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const send = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, init)
    await res.arrayBuffer()
    return res
  }
  return { app, base, lines, raw, send }
}

const post = (body: string, headers: Record<string, string> = {}): RequestInit =>
  ({ method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }, body })

t.test('one access line per request, when its answer is sent, rejections included', async (t) => {
  const { lines, raw, send } = await logged(t)
  const requests: Array<[string, string, RequestInit, number]> = [
    ['created', '/plants', post('{"id":1,"name":"Fern"}'), 200],
    ['replayed', '/plants', post('{"id":1,"name":"Fern"}'), 200],
    ['conflict', '/plants', post('{"id":1,"name":"Ivy"}'), 409],
    ['invalid', '/plants', post('{"id":"one"}'), 400],
    ['malformed', '/plants', post('{"id":'), 400],
    ['anonymous', '/plants', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, 401],
    ['wrong-token', '/plants', post('{}', { authorization: 'Bearer not-the-token-0123456789' }), 401],
    ['unknown', '/nowhere?x=1', {}, 404],
    ['probe', '/healthz', {}, 200]
  ]
  for (const [id, path, init, status] of requests) {
    const res = await send(path, { ...init, headers: { ...init.headers, 'x-request-id': id } })
    t.equal(res.status, status, `${id}: ${status}`)
    t.equal(res.headers.get('x-request-id'), id, `${id}: the id is sent back`)
  }
  for (const [id, path, init, status] of requests) {
    const mine = lines.filter((line) => line.reqId === id)
    t.equal(mine.length, 1, `${id}: exactly one line`)
    t.match(mine[0], { level: 30, msg: 'request', method: (init.method ?? 'GET'), url: path, statusCode: status, remoteAddress: '127.0.0.1' })
    t.type(mine[0].responseTime, 'number')
  }
  t.equal(lines.filter((line) => line.msg === 'request').length, requests.length, 'no other access lines')
  t.notMatch(raw.join(''), TOKEN, 'no token in the log')
  t.notMatch(raw.join(''), 'not-the-token', 'not even a rejected one')
  t.notMatch(raw.join(''), /authorization/i, 'no Authorization header')
})

t.test('a credential in the query is logged without its value; the rest of the URL as asked', async (t) => {
  const { lines, raw, send } = await logged(t)
  await send('/nowhere?access_token=query-token-1&api_key=query-key-2&author=Ann&authToken=query-token-3', { headers: { 'x-request-id': 'queried' } })
  t.equal(lines.find((line) => line.reqId === 'queried')?.url, '/nowhere?access_token=[Redacted]&api_key=[Redacted]&author=Ann&authToken=[Redacted]')
  t.notMatch(raw.join(''), /query-(token|key)-/, 'no credential in the log')
})

t.test('above info, no access lines', async (t) => {
  const { lines, send } = await logged(t, { LOG_LEVEL: 'warn' })
  await send('/plants', post('{"id":1,"name":"Fern"}'))
  await send('/nowhere')
  t.same(lines, [])
})

t.test('request ids: a sane one is used, none or a hostile one gets a fresh UUID, never echoed', async (t) => {
  const { lines, raw, send } = await logged(t)
  const sane = `A-z_0.9-${'x'.repeat(120)}` // 128 characters
  t.equal((await send('/healthz', { headers: { 'x-request-id': sane } })).headers.get('x-request-id'), sane, '128 characters of A-Z a-z 0-9 - _ . are kept')

  const fresh = (await send('/healthz')).headers.get('x-request-id')
  t.match(fresh, UUID, 'absent: a UUID')

  const hostile = [
    'x'.repeat(129),
    'has space',
    'semi;colon',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    'ünïcode',
    ''
  ]
  const given = new Set<string>()
  for (const value of hostile) {
    const res = await send('/healthz', { headers: { 'x-request-id': value } })
    const id = res.headers.get('x-request-id')!
    t.match(id, UUID, `${JSON.stringify(value.slice(0, 20))}: replaced by a UUID`)
    given.add(id)
  }
  t.equal(given.size, hostile.length, 'each a new one')
  const ids = lines.map((line) => line.reqId)
  t.ok(ids.includes(sane) && ids.includes(fresh), 'the ids answered are the ids logged')
  for (const value of hostile.filter(Boolean)) t.notMatch(raw.join(''), value, `${JSON.stringify(value.slice(0, 20))} is not logged`)

  // The same id twice is the caller's business: both requests carry it.
  await send('/healthz', { headers: { 'x-request-id': 'retry-1' } })
  await send('/healthz', { headers: { 'x-request-id': 'retry-1' } })
  t.equal(lines.filter((line) => line.reqId === 'retry-1').length, 2)
})

t.test('a request id on an answer made before any handler ran: a body too large', async (t) => {
  const { lines, send } = await logged(t, { BODY_LIMIT_BYTES: '1024' })
  const big = await send('/plants', post(JSON.stringify({ id: 1, name: 'x'.repeat(2000) }), { 'x-request-id': 'too-big' }))
  t.equal(big.status, 413)
  t.equal(big.headers.get('x-request-id'), 'too-big')
  t.match(lines.filter((line) => line.reqId === 'too-big'), [{ statusCode: 413 }])
})
