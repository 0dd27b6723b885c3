import Database from 'better-sqlite3'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { openStoreOf } from '../helpers/app.ts'
import { waitFor } from '../helpers/proc.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// SIGTERM under load: answered, refused, exited 0, durable. And the forced exits.
const TOKEN = 'shutdown-test-token-0123456789'

function serve (t: any, extra: Record<string, string> = {}) {
  const cwd = t.testdir()
  const databaseUrl = `sqlite:${join(cwd, 'plants.db')}`
  return { databaseUrl, server: startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', ...extra }, cwd) }
}

/** A create whose body never finishes: it keeps the drain from completing, until its socket is destroyed. */
async function stuckRequest (url: string): Promise<Socket> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`)
  await sleep(100)
  return socket
}

/**
 * How a new connection to `url` ends: undefined when accepted, else its error's code, or 'ETIMEDOUT'
 * after a second unanswered (a full backlog drops the handshake), so that the caller's bound holds.
 */
async function connectOutcome (url: string): Promise<string | undefined> {
  return await new Promise((resolve) => {
    const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1', timeout: 1000 })
    socket.on('connect', () => { socket.destroy(); resolve(undefined) })
    socket.on('timeout', () => { socket.destroy(); resolve('ETIMEDOUT') })
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code))
  })
}

function integrityOf (databaseUrl: string): string {
  const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true })
  try {
    return db.pragma('integrity_check', { simple: true }) as string
  } finally {
    db.close()
  }
}

t.test('SIGTERM under load: answers, refuses new connections, exits 0 promptly, every 200 durable', async (t) => {
  const { databaseUrl, server } = serve(t)
  const { url } = await server.listening
  const acked = new Map<number, string>()
  const statuses: number[] = []
  let nextId = 1
  let signalled = false
  const worker = async (): Promise<void> => {
    for (;;) {
      const id = nextId++
      try {
        const res = await postPlant(url, TOKEN, `{"id":${id},"name":"p${id}"}`)
        statuses.push(res.status)
        const body = await res.json() as { error?: number }
        if (res.status === 200) acked.set(id, `p${id}`)
        else t.equal(body.error, res.status, `a ${res.status} is in the Error shape`)
      } catch {
        if (signalled) return // refused or closed once the shutdown began
        throw new Error('a request failed before the signal')
      }
    }
  }
  const workers = Array.from({ length: 16 }, worker)
  // Under load: at least 400 ms of it, and more than 50 acknowledged, however slow the machine.
  await sleep(400)
  await waitFor(() => acked.size > 50, 60_000, 'more than 50 creates acknowledged', () => [server.child.pid!])
  // A create held open: the drain cannot end while it stands, so a refusal meanwhile is the closed
  // listener's, not a process gone.
  const held = await stuckRequest(url)
  signalled = true
  const sentAt = Date.now()
  server.child.kill('SIGTERM')
  // However long a loaded machine takes to act on the signal: tried until refused, within the bound.
  let refused = await connectOutcome(url)
  while (refused !== 'ECONNREFUSED' && Date.now() - sentAt < 5000) {
    await sleep(20)
    refused = await connectOutcome(url)
  }
  t.equal(refused, 'ECONNREFUSED', 'a new connection is refused')
  t.equal(server.child.exitCode, null, 'while a request still drains')
  held.destroy()
  t.equal(await server.exited, 0, 'exits 0')
  t.ok(Date.now() - sentAt < 5000, `within a bounded time (${Date.now() - sentAt} ms)`)
  await Promise.all(workers)

  t.ok(acked.size > 50, `${acked.size} creates acknowledged`)
  t.same([...new Set(statuses)].filter((s) => s !== 200 && s !== 503), [], 'only 200s, and 503s for requests arriving while closing')
  const store = await openStoreOf(t, databaseUrl)
  let missing = 0
  for (const [id, name] of acked) if ((await store.get(BigInt(id)))?.name !== name) missing++
  t.equal(missing, 0, 'every acknowledged plant is stored')
})

t.test('a second SIGTERM forces the exit, and the store survives it', async (t) => {
  const { databaseUrl, server } = serve(t)
  const { url } = await server.listening
  const created = await postPlant(url, TOKEN, '{"id":1,"name":"Kept"}')
  t.equal(created.status, 200)
  await stuckRequest(url)
  server.child.kill('SIGTERM')
  await sleep(200)
  const sentAt = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1, 'exits 1 at once')
  t.ok(Date.now() - sentAt < 2000)
  t.equal(integrityOf(databaseUrl), 'ok', 'the SQLite file passes its integrity check')
  t.same(await (await openStoreOf(t, databaseUrl)).get(1n), { id: 1n, name: 'Kept' })
})

t.test('a drain past SHUTDOWN_TIMEOUT_MS forces the exit, and the store survives it', async (t) => {
  const { databaseUrl, server } = serve(t, { SHUTDOWN_TIMEOUT_MS: '500' })
  const { url } = await server.listening
  t.equal((await postPlant(url, TOKEN, '{"id":1,"name":"Kept"}')).status, 200)
  await stuckRequest(url)
  const sentAt = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 1, 'exits 1 once the deadline passes')
  const took = Date.now() - sentAt
  t.ok(took >= 450 && took < 3000, `after the deadline (${took} ms)`)
  t.equal(integrityOf(databaseUrl), 'ok')
  t.same(await (await openStoreOf(t, databaseUrl)).get(1n), { id: 1n, name: 'Kept' })
})
