import t from 'tap'
import { StoreUnavailableError } from '../../src/errors.ts'
import type { StoreObserver } from '../../src/store/group-commit.ts'
import { openStore } from '../../src/store/open.ts'
import type { CreateOutcome, StoredPlant } from '../../src/store/store.ts'
import { freshDatabase, openStoreOf } from '../helpers/app.ts'
import { startPostgres } from '../helpers/postgres.ts'

// Group commit on both stores: creates that arrive together are committed together, and answer
// exactly as they would one at a time.

function observed () {
  const commits: number[] = []
  const answered: CreateOutcome[] = []
  const depths: number[] = []
  const waits: number[] = []
  const observer: StoreObserver = {
    committed: (size) => commits.push(size),
    answered: (outcome) => answered.push(outcome),
    pending: (depth) => depths.push(depth),
    waited: (seconds) => waits.push(seconds)
  }
  return { commits, answered, depths, waits, observer }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  t.test(backend, async (t) => {
    t.test('creates of one turn are one commit; duplicates inside it answer as one at a time would', async (t) => {
      const url = await freshDatabase(t, backend)
      const { commits, answered, depths, waits, observer } = observed()
      const store = await openStore(url, { pgPoolSize: 4, observer })
      t.teardown(() => store.close())
      t.equal(await store.create({ id: 100n, name: 'Stored before' }), 'created')
      commits.length = 0
      const batch: StoredPlant[] = [
        { id: 3n, name: 'C' },
        { id: 1n, name: 'A' },
        { id: 1n, name: 'A' }, // the same body again: a replay of the first
        { id: 2n, name: 'B' },
        { id: 1n, name: 'Not A' }, // a different body: the first one won
        { id: 100n, name: 'Stored before' },
        { id: 100n, name: 'Different' },
        { id: 2n, name: 'B', tag: 'x' },
        { id: 2n ** 63n - 1n, name: 'Max' }
      ]
      const outcomes = await Promise.all(batch.map((plant) => store.create(plant)))
      t.same(outcomes, ['created', 'created', 'replayed', 'created', 'conflict', 'replayed', 'conflict', 'conflict', 'created'])
      t.same(commits, [batch.length], 'one commit for the whole batch')
      t.same(answered.slice(1).sort(), [...outcomes].sort(), 'every answer is observed')
      t.equal(Math.max(...depths), batch.length, 'the whole batch waited at once')
      t.equal(depths.at(-1), 0, 'and nothing waits once it is answered')
      t.equal(waits.length, batch.length + 1, 'every create\'s wait is observed')
      t.same(await store.get(1n), { id: 1n, name: 'A' })
      t.same(await store.get(2n), { id: 2n, name: 'B' })
      t.same(await store.get(3n), { id: 3n, name: 'C' })
      t.same(await store.get(2n ** 63n - 1n), { id: 2n ** 63n - 1n, name: 'Max' })
    })

    t.test('a row the database refuses fails alone; the rest of its batch is stored', async (t) => {
      const url = await freshDatabase(t, backend)
      const { commits, observer } = observed()
      const store = await openStore(url, { pgPoolSize: 4, observer })
      t.teardown(() => store.close())
      const settled = await Promise.allSettled([
        store.create({ id: 1n, name: 'A' }),
        store.create({ id: 2n ** 64n, name: 'Beyond int8' }),
        store.create({ id: 2n, name: 'B' }),
        store.create({ id: 3n, name: null } as unknown as StoredPlant),
        store.create({ id: 1n, name: 'Not A' })
      ])
      t.same(settled.map((s) => s.status === 'fulfilled' ? s.value : 'rejected'), ['created', 'rejected', 'created', 'rejected', 'conflict'])
      t.ok(settled.every((s) => s.status === 'fulfilled' || !(s.reason instanceof StoreUnavailableError)), 'a bad row is no outage')
      t.same(commits, [5], 'still one commit')
      t.same(await store.get(1n), { id: 1n, name: 'A' })
      t.same(await store.get(2n), { id: 2n, name: 'B' })
      t.equal(await store.get(3n), undefined)
    })

    t.test('batches grow with the load and every create is answered', async (t) => {
      const url = await freshDatabase(t, backend)
      const { commits, observer } = observed()
      const store = await openStore(url, { pgPoolSize: 2, observer })
      t.teardown(() => store.close())
      // Waves of creates while earlier commits are under way.
      const waves = await Promise.all(Array.from({ length: 20 }, async (_, wave) => {
        await new Promise((resolve) => setTimeout(resolve, wave))
        return await Promise.all(Array.from({ length: 50 }, (_, i) => store.create({ id: BigInt(wave * 50 + i), name: `p${wave}-${i}` })))
      }))
      t.ok(waves.flat().every((o) => o === 'created'), '1,000 created')
      t.equal(commits.reduce((a, b) => a + b, 0), 1000, 'each create in exactly one commit')
      t.ok(commits.length < 1000, `${commits.length} commits for 1,000 creates`)
      const reader = await openStoreOf(t, url)
      t.same(await reader.get(999n), { id: 999n, name: 'p19-49' })
    })
  })
}

t.test('postgres: the database going away mid-batch answers 503, loses no acknowledged plant, and recovers', async (t) => {
  const server = await startPostgres()
  const store = await openStore(server.url, { pgPoolSize: 4 })
  t.teardown(() => store.close())
  const results: Array<{ id: bigint, outcome?: CreateOutcome, error?: unknown }> = []
  let id = 0n
  const run = { stopping: false }
  const writer = async (): Promise<void> => {
    while (!run.stopping) {
      const plant = { id: ++id, name: `plant ${id}` }
      try {
        results.push({ id: plant.id, outcome: await store.create(plant) })
      } catch (error) {
        results.push({ id: plant.id, error })
      }
    }
  }
  const writers = Array.from({ length: 32 }, writer)
  await new Promise((resolve) => setTimeout(resolve, 300))
  await server.kill() // every process at once, mid-batch
  await new Promise((resolve) => setTimeout(resolve, 300))
  run.stopping = true
  await Promise.all(writers)

  const errors = results.filter((r) => r.error !== undefined)
  const acked = results.filter((r) => r.outcome === 'created')
  t.ok(acked.length > 0, `${acked.length} acknowledged before the database went away`)
  t.ok(errors.length > 0, `${errors.length} refused while it was away`)
  t.ok(errors.every((r) => r.error instanceof StoreUnavailableError), 'every refusal is "unavailable" (503)')
  t.ok(results.every((r) => r.outcome === undefined || r.outcome === 'created'), 'no create answered anything else')

  await server.start()
  let recovered: CreateOutcome | undefined
  for (let i = 0; i < 50 && recovered === undefined; i++) {
    try { recovered = await store.create({ id: -1n, name: 'after' }) } catch { await new Promise((resolve) => setTimeout(resolve, 100)) }
  }
  t.equal(recovered, 'created', 'the pool reconnects by itself')
  let lost = 0
  for (const { id } of acked) if ((await store.get(id))?.name !== `plant ${id}`) lost++
  t.equal(lost, 0, 'every acknowledged plant is stored')
})
