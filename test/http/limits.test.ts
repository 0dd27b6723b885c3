import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { assertError, buildTestApp, post, testConfig, TOKEN } from '../helpers/app.ts'

// Each resource limit: its knob, its default (see config.test.ts), and what a client sees.

async function listening (t: any, env: Record<string, string>) {
  const app = await buildTestApp(t, await testConfig(t, env))
  const url = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
  return { app, port: Number(url.port) }
}

/** A raw socket, to send what a well-behaved client would not. */
function open (port: number): Promise<{ socket: Socket, received: () => string, closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let data = ''
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, received: () => data, closed }))
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.on('data', (chunk) => { data += chunk })
    socket.on('error', () => {})
    socket.once('error', reject)
  })
}

function parse (raw: string): { status: number, body: any } {
  const [head, body] = raw.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) }
}

t.test('body size: BODY_LIMIT_BYTES, 413', async (t) => {
  const app = await buildTestApp(t, await testConfig(t, { BODY_LIMIT_BYTES: '2048' }))
  assertError(t, await post(app, { id: 1, name: 'x'.repeat(3000) }), 413, /too large/)
  t.equal((await post(app, { id: 1, name: 'x'.repeat(1500) })).statusCode, 200)
})

t.test('header and URL size: MAX_HEADER_BYTES, 431 in the Error shape', async (t) => {
  const { port } = await listening(t, { MAX_HEADER_BYTES: '2048' })
  for (const request of [
    `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4000)}\r\n\r\n`,
    `GET /healthz?${'q'.repeat(4000)} HTTP/1.1\r\nHost: x\r\n\r\n`
  ]) {
    const { socket, received, closed } = await open(port)
    socket.write(request)
    await closed
    const { status, body } = parse(received())
    t.equal(status, 431)
    t.same(body, { error: 431, message: 'The request line and headers are too large' })
  }
})

t.test('slow clients: REQUEST_TIMEOUT_MS, 408 and the connection closed', async (t) => {
  const { port } = await listening(t, { REQUEST_TIMEOUT_MS: '300' })
  const { socket, received, closed } = await open(port)
  const started = Date.now()
  socket.write('POST /plants HTTP/1.1\r\nHost: x\r\n') // slowloris: headers that never end
  await closed
  t.ok(Date.now() - started < 3000, 'closed within a bounded time')
  const { status, body } = parse(received())
  t.equal(status, 408)
  t.same(body, { error: 408, message: 'The request took too long to arrive' })
})

t.test('idle keep-alive: KEEP_ALIVE_TIMEOUT_MS', async (t) => {
  const { port } = await listening(t, { KEEP_ALIVE_TIMEOUT_MS: '200' })
  const { socket, received, closed } = await open(port)
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  const started = Date.now()
  await closed
  t.match(received(), /^HTTP\/1.1 200/)
  t.ok(Date.now() - started < 2000, 'the idle connection is closed by the server')
})

t.test('connections: MAX_CONNECTIONS, further ones closed at once', async (t) => {
  const { port } = await listening(t, { MAX_CONNECTIONS: '2' })
  const held = [await open(port), await open(port)]
  const third = await open(port)
  await third.closed
  t.equal(third.received(), '', 'the third connection is closed unanswered')
  held[0].socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  await held[0].closed
  t.match(held[0].received(), /^HTTP\/1.1 200/, 'the held ones are served')
  held[1].socket.destroy()
})

t.test('overload: MAX_EVENT_LOOP_DELAY_MS sheds API requests with 503, probes still answer', async (t) => {
  const app = await buildTestApp(t, await testConfig(t, { MAX_EVENT_LOOP_DELAY_MS: '50' }))
  t.equal((await post(app, { id: 1, name: 'Fern' })).statusCode, 200, 'no shedding right after start-up')
  await sleep(2100) // shedding is armed once the start-up lag is out of the samples (two of 1 s)
  // Keep the event loop lagging ~90 ms at every turn, as under overload.
  for (let i = 0; i < 25; i++) { // 2.25 s: a whole sample window lags
    const until = Date.now() + 90
    while (Date.now() < until); // busy: nothing else runs
    await new Promise((resolve) => setImmediate(resolve))
  }
  const shed = await post(app, { id: 2, name: 'Fern' })
  assertError(t, shed, 503, /overloaded/)
  t.equal(shed.headers['retry-after'], '1')
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, 'liveness is not shed')
})

t.test('while closing: a request under way is served, one still arriving gets 503, each closes its connection', async (t) => {
  const { app, port } = await listening(t, {})
  const body = JSON.stringify({ id: 1, name: 'Fern' })
  const head = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
  const underWay = await open(port)
  underWay.socket.write(head + body.slice(0, 5)) // headers in: the request is under way
  const arriving = await open(port)
  arriving.socket.write(head.slice(0, 20)) // its headers are still arriving
  await sleep(100)
  const closing = app.close()
  await sleep(100)
  underWay.socket.write(body.slice(5))
  arriving.socket.write(head.slice(20) + body)
  await Promise.all([underWay.closed, arriving.closed, closing])
  t.match(underWay.received(), /^HTTP\/1.1 200 [^]*connection: close/i, 'the request under way is answered, and its connection closed')
  const refused = arriving.received()
  t.match(refused, /^HTTP\/1.1 503 [^]*connection: close/i)
  t.same(JSON.parse(refused.split('\r\n\r\n')[1]), { error: 503, message: 'This instance is shutting down; retry' })
})
