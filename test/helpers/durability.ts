import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import { openStore } from '../../src/store/open.ts'
import { isUnavailable } from '../../src/store/postgres.ts'
import type { PlantStore } from '../../src/store/store.ts'
import { waitUntil } from './proc.ts'
import { postPlant } from './server-process.ts'

// What the crash and power-loss tests share: concurrent creates whose acknowledgements are
// recorded, and the checks that every acknowledged plant survived.

export interface CreateLog {
  nextId: bigint
  /** Every plant answered 200, by id, with the name it was sent with. */
  acked: Map<bigint, string>
  /** How many answers of each status. */
  statuses: Map<number, number>
  /** How many requests got no answer: the connection failed. */
  failed: number
  /** Why, by the error's code and message. */
  failures: Map<string, number>
}

export const createLog = (): CreateLog => ({ nextId: 1n, acked: new Map(), statuses: new Map(), failed: 0, failures: new Map() })

// A request whose connection fails (a kept-alive socket the server has just closed, as one may
// between rounds) is followed by the next one; a client stops after this many in a row: the
// server is gone.
const FAILURES_IN_A_ROW = 5

/**
 * Posts new plants from `clients` concurrent clients until `stop()` says so, or the server is
 * gone, recording every answer.
 */
export async function createUntil (url: string, token: string, log: CreateLog, stop: () => boolean, clients = 16): Promise<void> {
  const client = async (): Promise<void> => {
    for (let failures = 0; !stop();) {
      const id = log.nextId++
      const name = `plant ${id}`
      try {
        const res = await postPlant(url, token, `{"id":${id},"name":"${name}"}`)
        await res.arrayBuffer()
        log.statuses.set(res.status, (log.statuses.get(res.status) ?? 0) + 1)
        if (res.status === 200) log.acked.set(id, name)
        failures = 0
      } catch (err) {
        const cause = (err as { cause?: { code?: string, message?: string } }).cause
        const why = `${cause?.code ?? (err as Error).name}: ${cause?.message ?? (err as Error).message}`
        log.failures.set(why, (log.failures.get(why) ?? 0) + 1)
        log.failed++
        if (++failures === FAILURES_IN_A_ROW) return
        await sleep(50)
      }
    }
  }
  await Promise.all(Array.from({ length: clients }, client))
}

/**
 * Waits for a moment among creates: this round's first acknowledgement (the store is taking
 * writes), then up to `spreadMs` more, at random. A fixed delay instead would let a slow machine
 * kill a server before it stored anything, and a floor on the count would fail there.
 */
export async function amongCreates (t: Test, log: CreateLog, spreadMs: number, what: string): Promise<void> {
  const before = log.acked.size
  await waitUntil(() => log.acked.size > before, 60_000, () =>
    `${what}: no create acknowledged in 60 s (answers so far by status: ${JSON.stringify(Object.fromEntries(log.statuses))}; requests whose connection failed: ${log.failed}, ${JSON.stringify(Object.fromEntries(log.failures))})`)
  t.pass(`${what}: creates were acknowledged before it`)
  await sleep(Math.random() * spreadMs)
}

// A database just restarted may be slow to take the first connections on a loaded machine (one
// run saw the store's 5 s connect bound pass, right after PostgreSQL accepted the restart's probe):
// the check waits for it, this long at most, and says when it had to.
const READY_WITHIN_MS = 30_000

/** The store at `databaseUrl`, opened once the database takes connections. */
async function openWhenReady (t: Test, databaseUrl: string, what: string): Promise<PlantStore> {
  const began = Date.now()
  for (let attempt = 1; ; attempt++) {
    try {
      const store = await openStore(databaseUrl, { pgPoolSize: 2 })
      if (attempt > 1) t.comment(`${what}: the database took the check's connection after ${attempt} attempts, ${Date.now() - began} ms`)
      return store
    } catch (err) {
      if (!isUnavailable(err) || Date.now() - began > READY_WITHIN_MS) throw err
      await sleep(100)
    }
  }
}

/** Through the store: every acknowledged plant is there, exactly as sent. */
export async function expectStored (t: Test, databaseUrl: string, acked: Map<bigint, string>, what: string): Promise<void> {
  const store = await openWhenReady(t, databaseUrl, what)
  let lost = 0
  try {
    for (const [id, name] of acked) if ((await store.get(id))?.name !== name) lost++
  } finally {
    await store.close()
  }
  t.equal(lost, 0, `${what}: all ${acked.size} acknowledged plants are stored`)
}

/** Through the API: a different body for any acknowledged id is a conflict. */
export async function expectConflicts (t: Test, url: string, token: string, acked: Map<bigint, string>): Promise<void> {
  const statuses = new Map<number, number>()
  const ids = [...acked.keys()]
  for (let i = 0; i < ids.length; i += 64) {
    await Promise.all(ids.slice(i, i + 64).map(async (id) => {
      const res = await postPlant(url, token, `{"id":${id},"name":"someone else"}`)
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      await res.arrayBuffer()
    }))
  }
  t.same(Object.fromEntries(statuses), { 409: acked.size }, 'the API answers 409 for every acknowledged id')
}
