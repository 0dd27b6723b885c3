import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { StoreUnavailableError } from '../../src/errors.ts'
import { openPostgresStore } from '../../src/store/postgres.ts'
import { freshDatabaseUrl } from '../helpers/postgres.ts'

// A connection that fails as the pool hands it out. When PostgreSQL's postmaster dies, a backend
// that has just finished its start-up says ReadyForQuery and, at once, FATAL 57P01 ("terminating
// connection due to unexpected postmaster exit"): both in one packet. Seen in the power-loss test,
// where it ended the service with an uncaught 'error' event. A TCP proxy in front of a real
// PostgreSQL sends the same: the server's start-up, then that FATAL in the same write, then closes.

const POSTMASTER_EXIT = 'terminating connection due to unexpected postmaster exit'

/** PostgreSQL's ErrorResponse message: its fields, each a code letter and a C string, then a zero. */
function errorResponse (fields: Record<string, string>): Buffer {
  const body = Buffer.concat([...Object.entries(fields).map(([code, value]) => Buffer.from(`${code}${value}\0`)), Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write('E')
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

/** A proxy to `target`; armed, each new connection gets the server's start-up with that FATAL after its ReadyForQuery, then is closed. */
async function startProxy (t: Test, target: URL) {
  let armed = false
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => { sockets.delete(socket); client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream)
    if (!armed) {
      upstream.pipe(client)
      return
    }
    // Whole messages go through as they come; the first ReadyForQuery ('Z') goes with the FATAL.
    let held = Buffer.alloc(0)
    upstream.on('data', (chunk: Buffer) => {
      held = Buffer.concat([held, chunk])
      let at = 0
      while (at + 5 <= held.length && at + 1 + held.readInt32BE(at + 1) <= held.length) {
        const end = at + 1 + held.readInt32BE(at + 1)
        if (held[at] === 0x5a) {
          client.end(Buffer.concat([held.subarray(0, end), errorResponse({ S: 'FATAL', V: 'FATAL', C: '57P01', M: POSTMASTER_EXIT })]))
          upstream.destroy()
          return
        }
        at = end
      }
      client.write(held.subarray(0, at))
      held = held.subarray(at)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(() => { for (const socket of sockets) socket.destroy(); server.close() })
  const url = new URL(target)
  url.port = String(port)
  return { url: url.href, arm: (on: boolean) => { armed = on }, dropAll: () => { for (const socket of sockets) socket.destroy() } }
}

t.test('a connection that reports its backend\'s end as it is handed out answers 503, and the process lives on', async (t) => {
  const proxy = await startProxy(t, new URL(await freshDatabaseUrl()))
  const idleErrors: Error[] = []
  const store = await openPostgresStore(proxy.url, { poolSize: 1, timeoutMs: 5000, onIdleError: (err) => idleErrors.push(err) })
  t.teardown(() => store.close())
  t.equal(await store.create({ id: 1n, name: 'Fern' }), 'created')

  // The pool's one connection gone, so the next create opens another, through the armed proxy.
  proxy.dropAll()
  await new Promise((resolve) => setTimeout(resolve, 100))
  proxy.arm(true)
  await t.rejects(store.create({ id: 2n, name: 'Ivy' }), StoreUnavailableError, 'the create answers 503: nothing is stored')
  proxy.arm(false)
  t.equal(await store.create({ id: 2n, name: 'Ivy' }), 'created', 'then the pool connects again, and creates are stored')
  t.equal((await store.get(1n))?.name, 'Fern')
})
