import t from 'tap'
import { freshDatabase } from '../helpers/app.ts'
import { builtBundle } from '../helpers/bundle.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// better-sqlite3 12 aborted the process on Node 24.19+ when the garbage collector freed one of its
// statements: in normal operation, not in a test that failed. So the service runs as a real
// process under V8 flags that make collections frequent and every one of them full, in the main
// thread and in the SQLite worker alike, while it serves every kind of create; then it must stop
// on SIGTERM with exit code 0. It runs the bundle, as `npm start` does: from the TypeScript
// source, the start would compile it all while every allocation collects, which took a busy host
// more than the start's minute.
const TOKEN = 'gc-test-token-0123456789abcdef'
const CLIENTS = 16
const ROUNDS = 12
// V8 flags hold for every isolate of the process. --trace-gc prints a line per collection,
// headed by its isolate, to count them.
const NODE_ARGS = ['--gc-global', '--stress-scavenge=5', '--trace-gc']
// What is under test is surviving the collections, not their pace: on a busy host they hold the
// event loop and the worker for seconds, which the service would rightly answer with 503s (shed
// for lag, or a create past its store timeout). Neither bound is what this test is about.
const UNBOUNDED = { MAX_EVENT_LOOP_DELAY_MS: '0', STORE_TIMEOUT_MS: '60000' }

t.test('sustained creates, replays, conflicts and 400s through many collections, then a clean SIGTERM', async (t) => {
  const databaseUrl = await freshDatabase(t, 'sqlite')
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', ...UNBOUNDED }, undefined, NODE_ARGS, await builtBundle())
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

  const perIsolate = new Map<string, number>()
  for (const [, isolate] of server.output().stdout.matchAll(/^\[\d+:(0x[0-9a-f]+)\].*Mark-Compact/gm)) perIsolate.set(isolate, (perIsolate.get(isolate) ?? 0) + 1)
  const counts = [...perIsolate.values()].sort((a, b) => b - a)
  t.ok(counts.length >= 2 && counts[1] >= 50, `full collections in the main thread and the SQLite worker: ${counts.join(', ')}`)

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'SIGTERM exits 0')
  t.notMatch(server.output().stderr, /Assertion failed|Aborted|FATAL/, 'nothing aborted')
})
