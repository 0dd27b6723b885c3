import t from 'tap'
import { freshDatabase } from './helper.js'
import { postPlant, startServer } from './server-process.js'

// better-sqlite3 12 aborted the process on Node 24.19+ when the garbage collector freed one of its
// statements: in normal operation, not in a test that failed. So the service runs as a real
// process that collects garbage every few milliseconds while it serves every kind of create,
// then must stop on SIGTERM with exit code 0.
const TOKEN = 'gc-test-token-0123456789abcdef'
const CLIENTS = 16
const ROUNDS = 60
// --expose-gc gives the preload `gc()`; --trace-gc prints a line per collection, to count them.
const NODE_ARGS = ['--expose-gc', '--trace-gc', '--import', 'data:text/javascript,setInterval(() => globalThis.gc(), 10).unref()']

t.test('sustained creates, replays, conflicts and 400s through many collections, then a clean SIGTERM', async (t) => {
  const databaseUrl = await freshDatabase(t, 'sqlite')
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }, undefined, NODE_ARGS)
  const { url } = await server.listening

  const statuses: Record<number, number> = {}
  const send = async (body: string) => {
    const res = await postPlant(url, TOKEN, body)
    await res.arrayBuffer()
    statuses[res.status] = (statuses[res.status] ?? 0) + 1
  }
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
      const id = round * CLIENTS + client + 1
      await send(`{"id":${id},"name":"plant ${id}"}`) // created
      await send(`{"id":${id},"name":"plant ${id}"}`) // replayed
      await send(`{"id":${id},"name":"another"}`) // conflict
      await send(`{"id":"${id}","name":"plant ${id}"}`) // invalid
    }))
  }
  const creates = ROUNDS * CLIENTS
  t.same(statuses, { 200: 2 * creates, 409: creates, 400: creates }, `${4 * creates} answers, each as expected`)

  const collections = server.output().stdout.match(/Mark-Compact/g)?.length ?? 0
  t.ok(collections >= 100, `${collections} full collections while serving`)

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'SIGTERM exits 0')
  t.notMatch(server.output().stderr, /Assertion failed|Aborted|FATAL/, 'nothing aborted')
})
