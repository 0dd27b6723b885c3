import t from 'tap'
import type { StoredPlant } from '../../src/store/store.ts'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openStore } from '../../src/store/open.ts'
import { freshDatabase, openStoreOf } from '../helpers/app.ts'

/** Records schema version 99 through the raw driver, as a newer service would. */
async function bumpSchema (url: string): Promise<void> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length))
    db.pragma('user_version = 99')
    db.close()
    return
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('INSERT INTO schema_migrations (version) VALUES (99)')
  await client.end()
}

// One contract, every store.
for (const backend of ['sqlite', 'postgres'] as const) {
  t.test(backend, async (t) => {
    t.test('create, replay, conflict, get', async (t) => {
      const store = await openStoreOf(t, await freshDatabase(t, backend))
      t.equal(await store.get(1n), undefined)
      t.equal(await store.create({ id: 1n, name: 'Fern', tag: 'indoor' }), 'created')
      t.equal(await store.create({ id: 1n, name: 'Fern', tag: 'indoor' }), 'replayed')
      t.equal(await store.create({ id: 1n, name: 'Fern' }), 'conflict', 'a missing tag differs')
      t.equal(await store.create({ id: 1n, name: 'Fern', tag: '' }), 'conflict', 'an empty tag differs from none')
      t.equal(await store.create({ id: 1n, name: 'Ivy', tag: 'indoor' }), 'conflict')
      t.same(await store.get(1n), { id: 1n, name: 'Fern', tag: 'indoor' }, 'the first plant is kept')
      t.equal(await store.create({ id: 2n, name: 'Cactus' }), 'created')
      t.equal(await store.create({ id: 2n, name: 'Cactus' }), 'replayed')
      t.same(await store.get(2n), { id: 2n, name: 'Cactus' })
      await store.ping()
    })

    t.test('ids are exact across the int64 range', async (t) => {
      const store = await openStoreOf(t, await freshDatabase(t, backend))
      for (const id of [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 0n]) {
        t.equal(await store.create({ id, name: `p${id}` }), 'created', `${id}`)
        t.same(await store.get(id), { id, name: `p${id}` })
        t.equal(await store.create({ id, name: `p${id}` }), 'replayed')
      }
      t.equal(await store.get(2n ** 53n + 2n), undefined)
    })

    t.test('text is stored exactly as sent', async (t) => {
      const store = await openStoreOf(t, await freshDatabase(t, backend))
      const name = 'Ficus \u202Ewith RTL\u202C, emoji 🌿, CJK 植物, quote \' and "'
      t.equal(await store.create({ id: 3n, name, tag: 'x'.repeat(100_000) }), 'created')
      t.same(await store.get(3n), { id: 3n, name, tag: 'x'.repeat(100_000) })
    })

    t.test('racing creates of one id, from two store instances: one winner, replays and conflicts', async (t) => {
      const url = await freshDatabase(t, backend)
      const stores = [await openStoreOf(t, url), await openStoreOf(t, url)]
      const bodies: StoredPlant[] = [{ id: 9n, name: 'A' }, { id: 9n, name: 'B' }, { id: 9n, name: 'A', tag: 't' }]
      const attempts = Array.from({ length: 30 }, (_, i) => ({ store: stores[i % 2], plant: bodies[i % 3] }))
      const outcomes = await Promise.all(attempts.map(({ store, plant }) => store.create(plant)))
      t.equal(outcomes.filter((o) => o === 'created').length, 1, 'exactly one create wins')
      const winner = await stores[0].get(9n)
      t.ok(winner !== undefined)
      attempts.forEach(({ plant }, i) => {
        const same = plant.name === winner!.name && plant.tag === winner!.tag
        t.ok(same ? outcomes[i] !== 'conflict' : outcomes[i] === 'conflict', `attempt ${i}: ${outcomes[i]}`)
      })
    })

    t.test('creates arriving together: a bad or duplicate row fails only its own create', async (t) => {
      const store = await openStoreOf(t, await freshDatabase(t, backend))
      const settled = await Promise.allSettled([
        store.create({ id: 10n, name: 'A' }),
        store.create({ id: 11n, name: null } as unknown as StoredPlant),
        store.create({ id: 12n, name: 'B' }),
        store.create({ id: 10n, name: 'Not A' }),
        store.create({ id: 10n, name: 'A' }),
        store.create({ id: 2n ** 64n, name: 'Too big for int8' })
      ])
      t.same(settled.map((s) => s.status === 'fulfilled' ? s.value : 'rejected'), ['created', 'rejected', 'created', 'conflict', 'replayed', 'rejected'])
      t.same(await store.get(10n), { id: 10n, name: 'A' })
      t.same(await store.get(12n), { id: 12n, name: 'B' })
      t.equal(await store.get(11n), undefined)
    })

    t.test('a database migrated by a newer service is refused', async (t) => {
      const url = await freshDatabase(t, backend)
      await (await openStore(url, { pgPoolSize: 1 })).close() // migrated to today's version
      await bumpSchema(url)
      await t.rejects(openStore(url, { pgPoolSize: 1 }), /the database is at schema version 99, newer than this service knows \(1\)/)
    })

    t.test('migrations run once and reopening is safe', async (t) => {
      const url = await freshDatabase(t, backend)
      const [a, b] = await Promise.all([openStoreOf(t, url), openStoreOf(t, url)])
      t.equal(await a.create({ id: 4n, name: 'Aloe' }), 'created')
      t.same(await b.get(4n), { id: 4n, name: 'Aloe' })
    })
  })
}
