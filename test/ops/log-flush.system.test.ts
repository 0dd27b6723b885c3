import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { LOG_BUFFER_BYTES } from '../../src/ops/log-destination.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// The access lines are buffered (ops/log-destination.ts): every way the service ends but a
// SIGKILL still writes every line, and a SIGKILL loses at most the buffer.

const TOKEN = 'log-flush-token-0123456789'
const REQUESTS = 30
const THROW_ON_SIGNAL = fileURLToPath(new URL('../helpers/throw-on-signal.ts', import.meta.url))

async function service (t: Test, nodeArgs: string[] = []) {
  const server = startServer(t, { API_TOKENS: TOKEN, LOG_LEVEL: 'info', DATABASE_URL: 'sqlite:plants.db' }, t.testdir(), nodeArgs)
  const { url } = await server.listening
  const ids: string[] = []
  for (let i = 1; i <= REQUESTS; i++) {
    const res = await postPlant(url, TOKEN, `{"id":${i},"name":"Fern"}`)
    t.equal(res.status, 200)
    ids.push(res.headers.get('x-request-id')!)
    await res.arrayBuffer()
  }
  /** The access lines in the log so far, by request id. */
  const accessLines = (): Map<string, string> => new Map(server.output().stdout.split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => [JSON.parse(line).reqId, line]))
  return { server, url, ids, accessLines }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal}: the drain ends in process.exit(0), and every access line is written`, async (t) => {
    const { server, ids, accessLines } = await service(t)
    server.child.kill(signal)
    t.equal(await server.exited, 0)
    t.same([...accessLines().keys()], ids)
    t.match(server.output().stdout, new RegExp(`"signal":"${signal}"[^\\n]*"msg":"closing: draining in-flight requests"`))
  })
}

t.test('a second signal\'s immediate process.exit(1), a request in flight: every access line is written', async (t) => {
  const { server, url, ids, accessLines } = await service(t)
  const { hostname, port } = new URL(url)
  // A request whose body never finishes holds the drain open.
  const held = request({ hostname, port, path: '/plants', method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': 100 } })
  held.on('error', () => {})
  held.write('{"id":')
  await new Promise((resolve) => setTimeout(resolve, 100))
  server.child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 100))
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1)
  t.same([...accessLines().keys()], ids)
  t.match(server.output().stdout, /"msg":"second signal, exiting now"/)
})

t.test('an uncaught exception: the fatal line and every access line before it are written, and the exit is 1', async (t) => {
  const { server, ids, accessLines } = await service(t, ['--import', THROW_ON_SIGNAL])
  server.child.kill('SIGUSR2')
  t.equal(await server.exited, 1)
  t.same([...accessLines().keys()], ids)
  const fatal = server.output().stdout.split('\n').filter((line) => line.includes('uncaught exception')).map((line) => JSON.parse(line))
  t.equal(fatal.length, 1)
  t.match(fatal[0], { level: 60, msg: 'uncaught exception, exiting', err: { message: 'a fault the test injected' } })
})

t.test('a SIGKILL loses at most LOG_BUFFER_BYTES of lines, the last ones', async (t) => {
  const { server, ids, accessLines } = await service(t)
  server.child.kill('SIGKILL')
  await server.exited
  const written = accessLines()
  t.same([...written.keys()], ids.slice(0, written.size), 'the lines written are the first ones, in order')
  const lineBytes = Math.min(...[...written.values()].map((line) => line.length + 1))
  const lost = (ids.length - written.size) * lineBytes
  t.ok(lost < LOG_BUFFER_BYTES, `${ids.length - written.size} lines lost, about ${lost} bytes`)
  t.ok(ids.length * lineBytes > LOG_BUFFER_BYTES, 'more lines were logged than the buffer holds')
})
