import { spawnSync } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { killGroup, spawnGroup } from '../helpers/children.ts'
import { expectStored } from '../helpers/durability.ts'
import { freshDatabase } from '../helpers/app.ts'
import { startPostgres } from '../helpers/postgres.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// A store that stops answering never stalls the service: the probes and the other requests are
// answered meanwhile, every create within STORE_TIMEOUT_MS, and the service recovers by itself.
const TOKEN = 'stalled-test-token-0123456789abcdef'
const STORE_TIMEOUT_MS = 2000

interface Answer { status: number, retryAfter: string | null, message: string, ms: number }

async function answer (request: Promise<Response>, events?: string[], name?: string): Promise<Answer> {
  const started = performance.now()
  const res = await request
  if (events !== undefined && name !== undefined) events.push(name)
  const body = await res.json() as { message?: string }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), message: body.message ?? '', ms: performance.now() - started }
}

async function until (check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++, await sleep(100)) if (await check()) return
  throw new Error(`never: ${what}`)
}

const hasStrace = spawnSync('strace', ['-V']).status === 0
// CI installs strace (npm test's pretest): there a missing one fails, never skips.
const needsStrace = { skip: !hasStrace && process.env.CI === undefined && 'no strace (scripts/ensure-tool.sh installs it)' }

/** Attaches strace to a running service, in every thread, so its `calls` fail or wait as `fault` says; heal() detaches. */
async function faultDisk (t: Test, pid: number, calls: string, fault: string): Promise<{ heal: () => Promise<void> }> {
  const strace = spawnGroup('strace', ['-f', '-p', String(pid), '-o', '/dev/null', '-e', `trace=${calls}`, '-e', `inject=${calls}:${fault}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  const detached = new Promise<void>((resolve) => strace.once('exit', () => resolve()))
  t.teardown(() => { strace.kill() })
  await new Promise<void>((resolve, reject) => {
    strace.stderr.on('data', (chunk: Buffer) => { if (/attached/.test(String(chunk))) resolve() })
    strace.once('exit', (code) => reject(new Error(`strace exited ${code} before attaching`)))
  })
  return { heal: async () => { strace.kill(); await detached } }
}

t.test('a stalled SQLite disk: probes and other requests answered, creates bounded and capped', needsStrace, async (t) => {
  const server = startServer(t, {
    API_TOKENS: TOKEN,
    DATABASE_URL: await freshDatabase(t, 'sqlite'),
    STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
    MAX_PENDING_CREATES: '2',
    METRICS_PORT: '0'
  })
  const { url } = await server.listening
  const metricsUrl = /Metrics: (\S+)/.exec(server.output().stdout)![1]
  const pending = async () => Number(/^plant_store_pending_creates (\S+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1])
  t.equal((await postPlant(url, TOKEN, '{"id":1,"name":"before"}')).status, 200, 'a create on the healthy disk')

  // Every fsync and fdatasync of the service, in every thread, now waits a minute.
  const disk = await faultDisk(t, server.child.pid!, 'fsync,fdatasync', 'delay_exit=60000000')

  const events: string[] = []
  const stuck = answer(postPlant(url, TOKEN, '{"id":2,"name":"stuck"}'), events, 'stuck create')
  const queued = answer(postPlant(url, TOKEN, '{"id":3,"name":"queued"}'), events, 'queued create')
  await until(async () => await pending() === 2, 'two creates wait for the disk')

  const healthz = await answer(fetch(`${url}/healthz`), events, 'healthz')
  const unauthorized = await answer(fetch(`${url}/plants`, { method: 'POST' }), events, '401')
  const refused = await answer(postPlant(url, TOKEN, '{"id":4,"name":"refused"}'), events, 'refused create')
  const readyz = await answer(fetch(`${url}/readyz`), events, 'readyz')
  const [first, second] = await Promise.all([stuck, queued])

  t.same(events.slice(0, 4), ['healthz', '401', 'refused create', 'readyz'], 'the probes, a 401 and the refusal are answered while the creates wait')
  t.same(events.slice(4).sort(), ['queued create', 'stuck create'], 'the waiting creates are answered last')
  t.equal(healthz.status, 200, '/healthz: alive')
  t.equal(unauthorized.status, 401)
  t.match(refused, { status: 503, retryAfter: '1', message: /Too many requests are waiting/ }, 'past MAX_PENDING_CREATES: 503 at once')
  t.match(readyz, { status: 503 }, '/readyz: not ready while the disk is stuck')
  for (const create of [first, second]) {
    t.match(create, { status: 503, retryAfter: '1', message: /did not answer in time/ }, 'a waiting create: 503 at STORE_TIMEOUT_MS')
  }

  await disk.heal() // detaching ends the injected delay: the disk answers again
  await until(async () => (await fetch(`${url}/readyz`)).status === 200, 'ready again')
  t.pass('/readyz: ready again by itself')
  t.equal((await postPlant(url, TOKEN, '{"id":4,"name":"refused"}')).status, 200, 'the refused create, retried, is stored')
  t.equal((await postPlant(url, TOKEN, '{"id":2,"name":"stuck"}')).status, 200, 'the timed-out create was stored after all: its retry is a replay')
  t.equal((await postPlant(url, TOKEN, '{"id":2,"name":"other"}')).status, 409)
  t.equal(await pending(), 0, 'nothing waits')

  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('a failed WAL sync: its create answers 503, the worker reopens the database, creates succeed again', needsStrace, async (t) => {
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: await freshDatabase(t, 'sqlite') })
  const { url } = await server.listening
  t.equal((await postPlant(url, TOKEN, '{"id":1,"name":"before"}')).status, 200, 'a create on the healthy disk')

  // Every fdatasync of the service now fails, as a disk's write error would.
  const disk = await faultDisk(t, server.child.pid!, 'fdatasync', 'error=EIO')
  t.match(await answer(postPlant(url, TOKEN, '{"id":2,"name":"unsynced"}')), { status: 503, retryAfter: '1' }, 'the create whose sync failed: 503, never a 200')
  await disk.heal()

  await until(async () => (await postPlant(url, TOKEN, '{"id":3,"name":"after"}')).status === 200, 'creates succeed again')
  t.pass('a new worker took over, with no restart of the service')
  t.equal((await postPlant(url, TOKEN, '{"id":2,"name":"unsynced"}')).status, 200, 'the failed create, retried, is stored')
  t.equal((await postPlant(url, TOKEN, '{"id":1,"name":"other"}')).status, 409, 'what was acknowledged before is still there')
  t.match(server.output().stdout, /store connection failed; replacing it/, 'the worker\'s end is logged')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('a hung PostgreSQL: every create answered within the bound, then recovery without a restart', async (t) => {
  const database = await startPostgres()
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: database.url, STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS) })
  const { url } = await server.listening

  const answers: Answer[] = []
  const acked = new Map<bigint, string>()
  let nextId = 1n
  const run = { stopped: false }
  const client = async (): Promise<void> => {
    while (!run.stopped) {
      const id = nextId++
      const a = await answer(postPlant(url, TOKEN, `{"id":${id},"name":"plant ${id}"}`))
      answers.push(a)
      if (a.status === 200) acked.set(id, `plant ${id}`)
    }
  }
  const load = Promise.all(Array.from({ length: 8 }, client))
  await until(async () => acked.size >= 50, 'creates are stored')

  await database.pause()
  const pausedAt = performance.now()
  t.teardown(database.resume)
  const before = answers.length
  await until(async () => (await fetch(`${url}/readyz`)).status === 503, 'not ready while the database hangs')
  t.pass('/readyz: 503 while the database hangs')
  t.equal((await fetch(`${url}/healthz`)).status, 200, '/healthz: still alive')
  // Hung for five times the bound: an unbounded create would wait all of it.
  await sleep(STORE_TIMEOUT_MS * 5)
  t.ok(answers.slice(before).some((a) => a.status === 503), 'creates answered 503 while it hung')
  const hung = performance.now() - pausedAt
  database.resume()

  await until(async () => (await fetch(`${url}/readyz`)).status === 200, 'ready again')
  t.pass('/readyz: ready again by itself')
  const resumed = answers.length
  await until(async () => answers.slice(resumed).some((a) => a.status === 200), 'creates succeed again')
  t.pass('creates succeed again, with no restart')
  run.stopped = true
  await load

  t.same([...new Set(answers.map((a) => a.status))].sort(), [200, 503], 'every answer a 200 or a 503')
  const slowest = Math.max(...answers.map((a) => a.ms))
  t.ok(slowest < hung / 2, `every create answered within the bound, long before the hang ended (slowest ${Math.round(slowest)} ms of STORE_TIMEOUT_MS ${STORE_TIMEOUT_MS}, hung ${Math.round(hung)} ms)`)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  await expectStored(t, database.url, acked, 'after the hang')
})

/** The store in a process of its own (helpers/store-process.ts), for strace to fault. */
async function startStore (t: Test, databaseUrl: string, timeoutMs: number) {
  const child = spawnGroup(process.execPath, [fileURLToPath(new URL('../helpers/store-process.ts', import.meta.url)), databaseUrl, String(timeoutMs)], {
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe']
  })
  t.teardown(() => { killGroup(child) })
  const answers = new Map<number, (line: { value?: unknown, error?: string }) => void>()
  let ready: () => void
  const started = new Promise<void>((resolve) => { ready = resolve })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text)
    if (line.ready === true) ready()
    else answers.get(line.seq)?.(line)
  })
  await Promise.race([started, sleep(60_000, undefined, { ref: false }).then(() => { throw new Error(`the store process did not start: ${stderr.slice(-500)}`) })])
  let seq = 0
  /** Sends one call; resolves with its answer and when it came, in ms since `since`. */
  const call = (op: 'create' | 'get', id: number, name?: string) => new Promise<{ value?: unknown, error?: string, at: number }>((resolve) => {
    const mine = seq++
    answers.set(mine, (line) => resolve({ ...line, at: performance.now() }))
    child.stdin.write(JSON.stringify({ seq: mine, op, id: String(id), name }) + '\n')
  })
  return { pid: child.pid!, call }
}

t.test('SQLite reads have the creates\' guarantees: never a row before its sync, and bounded by STORE_TIMEOUT_MS', needsStrace, async (t) => {
  const store = await startStore(t, await freshDatabase(t, 'sqlite'), STORE_TIMEOUT_MS)
  t.match(await store.call('create', 1, 'before'), { value: 'created' })

  // Each sync now takes 1 s, inside the bound: the create's row is written at once, durable 1 s later.
  let disk = await faultDisk(t, store.pid, 'fsync,fdatasync', 'delay_exit=1000000')
  const sent = performance.now()
  const create = store.call('create', 2, 'slow sync')
  await sleep(100) // the row is in the WAL; its sync is under way
  const read = await store.call('get', 2)
  const created = await create
  t.equal(created.value, 'created')
  t.equal(read.value, 'slow sync', 'the read finds the row')
  t.ok(read.at - sent >= 900, `but answers only once its sync is done, as its create does (after ${Math.round(read.at - sent)} ms; the create after ${Math.round(created.at - sent)} ms)`)
  await disk.heal()

  // Every sync now waits a minute: a read behind one answers 503's error at the bound.
  disk = await faultDisk(t, store.pid, 'fsync,fdatasync', 'delay_exit=60000000')
  const stuck = store.call('create', 3, 'stuck')
  await sleep(100)
  const started = performance.now()
  const bounded = await store.call('get', 3)
  t.equal(bounded.error, 'PLANTS_STORE_TIMEOUT', 'the read gives up at STORE_TIMEOUT_MS, with the 503 error')
  t.ok(bounded.at - started < STORE_TIMEOUT_MS * 10, 'within the bound (generously)')
  t.equal((await stuck).error, 'PLANTS_STORE_TIMEOUT', 'as the create does')
  await disk.heal()
  t.match(await store.call('get', 1), { value: 'before' }, 'reads answer again once the disk does')
})

t.test('PostgreSQL reads are bounded by STORE_TIMEOUT_MS too, and answer again once it does', async (t) => {
  const database = await startPostgres()
  const store = await startStore(t, database.url, STORE_TIMEOUT_MS)
  t.match(await store.call('create', 1, 'before'), { value: 'created' })
  t.match(await store.call('get', 1), { value: 'before' })
  await database.pause()
  t.teardown(database.resume)
  const started = performance.now()
  const hung = await store.call('get', 1)
  t.match(hung.error, /^PLANTS_STORE_(TIMEOUT|UNAVAILABLE)$/, 'a read of a hung database answers the 503 error')
  t.ok(hung.at - started < STORE_TIMEOUT_MS * 10, `within the bound (generously): ${Math.round(hung.at - started)} ms`)
  database.resume()
  await until(async () => (await store.call('get', 1)).value === 'before', 'reads answer again')
  t.pass('reads answer again, with no restart')
})
