import pg from 'pg'
import t from 'tap'
import { freshDatabaseUrl } from '../helpers/postgres.ts'
import { startServer } from '../helpers/server-process.ts'

// Two real server processes behind an imaginary load balancer, one PostgreSQL.
const TOKEN = 'multi-instance-token-0123456789'
const IDS = 150
const BODIES = [{ name: 'Fern' }, { name: 'Fern', tag: 'indoor' }, { name: 'Ivy' }]

t.test('concurrent creates across two instances: one winner per id, replays 200, conflicts 409', async (t) => {
  const databaseUrl = await freshDatabaseUrl()
  const cwd = t.testdir()
  const instances = [startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, PG_POOL_SIZE: '4' }, cwd), startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, PG_POOL_SIZE: '4' }, cwd)]
  const urls = await Promise.all(instances.map(async (instance) => (await instance.listening).url))

  // Every id gets four creates at once: the same body to both instances, and one other body each.
  const requests = []
  for (let id = 1; id <= IDS; id++) {
    const big = BigInt(id) + 2n ** 60n // ids beyond 2^53 too
    const same = BODIES[id % 3]
    const plan = [[0, same], [1, same], [0, BODIES[(id + 1) % 3]], [1, BODIES[(id + 2) % 3]]] as const
    for (const [instance, body] of plan) {
      requests.push({
        id: big,
        body,
        instance,
        send: () => fetch(`${urls[instance]}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body).replace('{', `{"id":${big},`)
        })
      })
    }
  }
  const statuses = await Promise.all(requests.map(async (r) => (await r.send()).status))

  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  t.teardown(() => client.end())
  const rows = (await client.query<{ id: string, name: string, tag: string | null }>('SELECT id::text, name, tag FROM plants')).rows
  const stored = new Map(rows.map((row) => [row.id, row]))
  t.equal(rows.length, IDS, 'every id is stored exactly once')
  t.ok(statuses.every((s) => s === 200 || s === 409), 'only 200s and 409s')

  let wrong = 0
  for (let i = 0; i < requests.length; i++) {
    const { id, body } = requests[i]
    const row = stored.get(String(id))
    const matches = row !== undefined && row.name === body.name && (row.tag ?? undefined) === (body as { tag?: string }).tag
    if (statuses[i] !== (matches ? 200 : 409)) wrong++
  }
  t.equal(wrong, 0, 'a 200 exactly where the body is the stored one, a 409 everywhere else')
  const perId = new Map<bigint, Set<string>>()
  requests.forEach(({ id, body }, i) => {
    if (statuses[i] === 200) perId.set(id, (perId.get(id) ?? new Set()).add(JSON.stringify(body)))
  })
  t.ok([...perId.values()].every((bodies) => bodies.size === 1), 'one distinct body answered 200 per id')
  t.equal(perId.size, IDS, 'every id was acknowledged')

  for (const instance of instances) instance.child.kill('SIGTERM')
  t.same(await Promise.all(instances.map((i) => i.exited)), [0, 0], 'both instances shut down cleanly')
})
