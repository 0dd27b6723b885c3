import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { AUTH, buildTestApp, testConfig } from '../helpers/app.ts'
import { startEmbeddedPostgres } from '../helpers/embedded-postgres.ts'
import { freePort } from '../helpers/ports.ts'
import { sql, startPostgres } from '../helpers/postgres.ts'

// An HA cluster failing over under load, as a platform runs one: a primary with a synchronous
// standby behind one address (a TCP proxy standing for the cluster's), 32 clients creating, the
// primary SIGKILLed, the standby promoted, the address switched. No create acknowledged before is
// lost, every answer is a 200 or a 503, creates succeed again within 5 s of the switch with no
// restart, and each 503'd create answers 200 when retried.

const CLIENTS = 32
const STORE_TIMEOUT_MS = 2000
const BACK_WITHIN_MS = 5000

/** A TCP proxy to a target that can be switched; a switch drops every connection to the old one. */
async function startProxy (t: Test, targetPort: number) {
  let target = targetPort
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => { sockets.delete(socket); client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream).pipe(client)
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  t.teardown(() => { for (const socket of sockets) socket.destroy(); server.close() })
  return { port, switchTo: (to: number) => { target = to; for (const socket of sockets) socket.destroy() } }
}

const withDatabase = (url: string, database: string, port?: number): string => {
  const out = new URL(url)
  out.pathname = `/${database}`
  if (port !== undefined) out.port = String(port)
  return out.href
}

t.test('failover under load: nothing acknowledged lost, only 200 or 503, back within 5 s, retries answer 200', async (t) => {
  // The primary, with the database and a standby's settings; then its stopped copy is the standby.
  const primary = await startPostgres()
  await sql(primary.url, 'CREATE DATABASE plants_ha')
  await sql(primary.url, "ALTER SYSTEM SET synchronous_standby_names = '*'")
  await primary.stop()
  const standbyDir = `${primary.dataDir}-standby`
  // cp -a keeps the owner and the 0700 mode PostgreSQL insists on (Node 22's cpSync keeps neither).
  execFileSync('cp', ['-a', primary.dataDir, standbyDir])
  t.teardown(() => rmSync(standbyDir, { recursive: true, force: true }))
  const primaryPort = new URL(primary.url).port
  const autoConf = join(standbyDir, 'postgresql.auto.conf')
  writeFileSync(autoConf, readFileSync(autoConf, 'utf8').replace(/^synchronous_standby_names.*$/m, '') +
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=postgres'\n`)
  writeFileSync(join(standbyDir, 'standby.signal'), '')
  await primary.start()
  const standby = await startEmbeddedPostgres({ dataDir: standbyDir, existing: true })
  t.teardown(standby.destroy)
  for (let i = 0; (await sql(primary.url, 'SELECT sync_state FROM pg_stat_replication'))[0]?.sync_state !== 'sync'; i++) {
    if (i > 300) throw new Error('the standby never became synchronous')
    await sleep(50)
  }
  t.pass('a primary with a synchronous standby')

  const proxy = await startProxy(t, Number(primaryPort))
  const app = await buildTestApp(t, await testConfig(t, { DATABASE_URL: withDatabase(primary.url, 'plants_ha', proxy.port), STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS), PG_POOL_SIZE: '8' }))

  const answers: Array<{ id: number, status: number, at: number }> = []
  const run = { stopped: false }
  let nextId = 0
  const client = async (): Promise<void> => {
    while (!run.stopped) {
      const id = ++nextId
      const res = await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: `{"id":${id},"name":"plant ${id}"}` })
      answers.push({ id, status: res.statusCode, at: performance.now() })
    }
  }
  const load = Promise.all(Array.from({ length: CLIENTS }, client))
  while (answers.filter((a) => a.status === 200).length < 500) await sleep(20)

  await primary.kill()
  await sql(withDatabase(standby.url, 'postgres'), 'SELECT pg_promote(true, 30)')
  proxy.switchTo(Number(new URL(standby.url).port))
  const switched = performance.now()
  while (!answers.some((a) => a.at > switched && a.status === 200) && performance.now() - switched < BACK_WITHIN_MS * 4) await sleep(10)
  const back = answers.find((a) => a.at > switched && a.status === 200)
  await sleep(500)
  run.stopped = true
  await load

  const ok = answers.filter((a) => a.status === 200)
  const refused = answers.filter((a) => a.status === 503)
  t.same([...new Set(answers.map((a) => a.status))].sort(), [200, 503], `${answers.length} creates: ${ok.length} answered 200, ${refused.length} 503, none anything else`)
  t.ok(back !== undefined && back.at - switched <= BACK_WITHIN_MS, `creates succeed again ${back === undefined ? 'never' : `${Math.round(back.at - switched)} ms`} after the switch, with no restart`)

  const promoted = withDatabase(standby.url, 'plants_ha')
  const stored = new Map((await sql(promoted, 'SELECT id, name FROM plants')).map((row) => [Number(row.id), row.name]))
  const lost = ok.filter((a) => stored.get(a.id) !== `plant ${a.id}`)
  t.equal(lost.length, 0, `all ${ok.length} acknowledged creates are in the promoted primary`)

  // Retried by the same 32 clients, as they would (all at once would pass MAX_PENDING_CREATES).
  const retried: number[] = []
  const queue = refused.map(({ id }) => id)
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      retried.push((await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: `{"id":${id},"name":"plant ${id}"}` })).statusCode)
    }
  }))
  t.same([...new Set(retried)], refused.length === 0 ? [] : [200], `each of the ${refused.length} 503'd creates answers 200 when retried`)
})
