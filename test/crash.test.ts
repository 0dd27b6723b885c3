import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { freshDatabase, openStoreOf } from './helper.js'
import { postPlant, startServer } from './server-process.js'

// A 200 means stored: kill -9 the server at a random moment under concurrent creates, restart it
// on the same database, and every acknowledged plant must be there. CRASH_ROUNDS sets the kills
// per store; the default gives 20 in all (12 on SQLite, 8 on PostgreSQL).
const TOKEN = 'crash-test-token-0123456789'
const ROUNDS = { sqlite: Number(process.env.CRASH_ROUNDS ?? 12), postgres: Number(process.env.CRASH_ROUNDS ?? 8) }
const WORKERS = 16

for (const backend of ['sqlite', 'postgres'] as const) {
  t.test(`${backend}: ${ROUNDS[backend]} rounds of SIGKILL under load`, async (t) => {
    const databaseUrl = await freshDatabase(t, backend)
    const cwd = t.testdir()
    const env = { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' }
    const acked = new Map<bigint, string>()
    const unexpected: number[] = []
    let nextId = 1n

    for (let round = 1; round <= ROUNDS[backend]; round++) {
      const server = startServer(t, env, cwd)
      const { url } = await server.listening
      const run = { killed: false }
      const worker = async (): Promise<void> => {
        while (!run.killed) {
          const id = nextId++
          const name = `plant ${id} of round ${round}`
          try {
            const res = await postPlant(url, TOKEN, `{"id":${id},"name":"${name}"}`)
            if (res.status === 200) acked.set(id, name)
            else unexpected.push(res.status)
            await res.arrayBuffer()
          } catch {
            return // the server is gone
          }
        }
      }
      const workers = Array.from({ length: WORKERS }, worker)
      await sleep(50 + Math.random() * 250)
      run.killed = true
      server.child.kill('SIGKILL')
      t.equal(await server.exited, null, `round ${round}: killed`)
      await Promise.all(workers)
    }
    t.same(unexpected, [], 'every answer before the kill was a 200')
    t.ok(acked.size > ROUNDS[backend] * 10, `${acked.size} creates were acknowledged`)

    // Through the store: every acknowledged plant, exactly as sent.
    const store = await openStoreOf(t, databaseUrl)
    let missing = 0
    for (const [id, name] of acked) {
      const plant = await store.get(id)
      if (plant?.name !== name) missing++
    }
    t.equal(missing, 0, 'the store holds every acknowledged plant')

    // Through the API, on a restarted server: a different body for any of them is a conflict.
    const server = startServer(t, env, cwd)
    const { url } = await server.listening
    const statuses = new Map<number, number>()
    const ids = [...acked.keys()]
    for (let i = 0; i < ids.length; i += 64) {
      await Promise.all(ids.slice(i, i + 64).map(async (id) => {
        const res = await postPlant(url, TOKEN, `{"id":${id},"name":"someone else"}`)
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        await res.arrayBuffer()
      }))
    }
    t.same(Object.fromEntries(statuses), { 409: acked.size }, 'the API answers 409 for every acknowledged id')
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0)
  })
}
