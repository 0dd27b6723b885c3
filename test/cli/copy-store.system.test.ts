import Database from 'better-sqlite3'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { CopyInputError, copyStore } from '../../src/store/copy.ts'
import { openSnapshot } from '../../src/store/snapshot.ts'
import { openStore } from '../../src/store/open.ts'
import type { StoredPlant } from '../../src/store/store.ts'
import { spawnGroup } from '../helpers/children.ts'
import { parseStoreUrl } from '../../src/store/url.ts'
import { bulkSqliteStore } from '../helpers/bulk-store.ts'
import { freshDatabaseUrl } from '../helpers/postgres.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// npm run copy-store, as an operator runs it: the command as a real process, between real
// SQLite files and the embedded PostgreSQL.

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'copy-test-token-0123456789abcdef'

interface Run { code: number | null, stdout: string, stderr: string }

/** Starts the command; `done` resolves with its exit code and output. */
function startCopy (...args: string[]) {
  const child = spawnGroup(process.execPath, [join(root, 'src/cli/copy-store.ts'), ...args], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  return { child, done }
}

const copy = async (...args: string[]): Promise<Run> => await startCopy(...args).done

/** Writes plants through the store, as the service does. */
async function fill (url: string, plants: StoredPlant[]): Promise<void> {
  const store = await openStore(url, { pgPoolSize: 2, maxPending: plants.length })
  try {
    await Promise.all(plants.map(async (plant) => await store.create(plant)))
  } finally {
    await store.close()
  }
}

/** Every plant a store holds, in id order. */
async function plantsOf (url: string): Promise<StoredPlant[]> {
  const view = await openSnapshot(parseStoreUrl(url))
  try {
    const all: StoredPlant[] = []
    for await (const page of view.pages(1000)) all.push(...page)
    return all
  } finally {
    await view.close()
  }
}

/** A SQLite store in `dir` of `count` plants with ids from 1. */
function bulkSqlite (dir: string, count: number): string {
  const path = join(dir, 'bulk.db')
  bulkSqliteStore(path, count, (i) => ({ id: BigInt(i + 1), name: `plant ${i + 1}`, ...(i % 2 === 1 && { tag: 'indoor' }) }))
  return `sqlite:${path}`
}

/** The checksum as copy-store defines it: each plant's SHA-256, its first 64 bits, summed modulo 2^64, in hex. */
const checksum = (plants: StoredPlant[]): string => plants
  .reduce((sum, { id, name, tag }) => (sum + createHash('sha256').update(JSON.stringify([String(id), name, tag ?? null])).digest().readBigUInt64BE(0)) % 2n ** 64n, 0n)
  .toString(16).padStart(16, '0')

const fileHash = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const EDGES: StoredPlant[] = [
  { id: INT64_MIN, name: 'the least id' },
  { id: INT64_MIN + 1n, name: 'Ficus', tag: '' },
  { id: -9007199254740993n, name: 'below -2^53' },
  { id: -1n, name: 'Monstera deliciosa — 龟背竹', tag: 'ليمون' },
  { id: 0n, name: 'zero' },
  { id: 9007199254740991n, name: '2^53 − 1' },
  { id: 9007199254740992n, name: '2^53', tag: 'indoor' },
  { id: 9007199254740993n, name: '2^53 + 1: 🌵🪴', tag: '𝔤𝔯𝔢𝔢𝔫 🏠' },
  { id: INT64_MAX - 1n, name: 'e\u0301 combining, \u200d joiner, \uFEFF bom' },
  { id: INT64_MAX, name: 'the greatest id', tag: 'x'.repeat(10_000) }
]

t.test('SQLite → PostgreSQL → SQLite: every plant exactly equal, int64 extremes and astral names included', async (t) => {
  const dir = t.testdir()
  const sqlite = `sqlite:${join(dir, 'plants.db')}`
  const postgres = await freshDatabaseUrl()
  const back = `sqlite:${join(dir, 'back.db')}`
  await fill(sqlite, EDGES)
  const expected = [...EDGES].sort((a, b) => a.id < b.id ? -1 : 1)

  for (const [from, to] of [[sqlite, postgres], [postgres, back]]) {
    const run = await copy(from, to)
    t.equal(run.code, 0, `${from.split(':')[0]} → ${to.split(':')[0]}: exit 0`, run)
    t.match(run.stdout, `${EDGES.length} plants in the snapshot: ${EDGES.length} copied, 0 already there (skipped), 0 conflicts, 0 refused`)
    t.match(run.stdout, new RegExp(`check: the target holds the snapshot exactly \\(10 plants, checksum ${checksum(EDGES)}\\), in [\\d.]+ s`))
    t.match(run.stderr, /^copied 10 of 10 plants \(100%\), [\d,]+\/s, about 0 s left\nchecked 10 of 10 plants \(100%\)/m, 'progress of the copy, then of the check, on standard error')
    t.same(await plantsOf(to), expected, 'the target holds exactly the source\'s plants')
  }
  const [first, second] = await Promise.all([copy(sqlite, postgres), copy(postgres, back)])
  t.match(first.stdout, '0 copied, 10 already there (skipped)', 'a second run skips what is there')
  t.match(second.stdout, '0 copied, 10 already there (skipped)')
  t.equal(/checksum (\w+)/.exec(first.stdout)?.[1], /checksum (\w+)/.exec(second.stdout)?.[1], 'one checksum for the same plants, whatever the store')
})

t.test('a live source: the copy holds one consistent snapshot while the service keeps writing', async (t) => {
  // Plants 1..40,000 are there before; then one client creates pairs, -i then 10,000,000 + i, one
  // at a time. Read in id order without a snapshot, the copy would see the -i that existed when
  // it started and the 10,000,000 + i that existed when it ended: more of these than of those.
  const dir = t.testdir()
  const source = bulkSqlite(dir, 40_000)
  const target = await freshDatabaseUrl()
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: source }, dir)
  const { url } = await server.listening
  const acked = new Set<bigint>()
  const writer = { stop: false }
  const writing = (async () => {
    for (let i = 1n; !writer.stop; i++) {
      for (const id of [-i, 10_000_000n + i]) {
        if ((await postPlant(url, TOKEN, `{"id":${id},"name":"live ${id}"}`)).status === 200) acked.add(id)
      }
    }
  })()
  while (acked.size < 50) await sleep(10)
  const before = new Set(acked)
  const run = await copy(source, target)
  const during = acked.size - before.size
  writer.stop = true
  await writing
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)

  t.equal(run.code, 0, 'exit 0', run)
  t.match(run.stdout, /check: the target holds the snapshot exactly/)
  t.ok(during > 0, `the service acknowledged ${during} creates while the copy ran`)
  const copied = await plantsOf(target)
  const total = Number(/^([\d,]+) plants in the snapshot/.exec(run.stdout)?.[1].replaceAll(',', ''))
  t.equal(copied.length, total, 'the target holds as many plants as the snapshot')
  const ids = new Set(copied.map((plant) => plant.id))
  t.ok([...before].every((id) => ids.has(id)), 'every plant acknowledged before the copy started is in it')
  t.ok(Array.from({ length: 40_000 }, (_, i) => BigInt(i + 1)).every((id) => ids.has(id)), 'and every plant that was there before')
  const lows = copied.filter((plant) => plant.id < 0n).map((plant) => -plant.id)
  const highs = copied.filter((plant) => plant.id > 10_000_000n).map((plant) => plant.id - 10_000_000n)
  const contiguous = (values: bigint[]) => values.every((value) => value >= 1n && value <= BigInt(values.length))
  t.ok(contiguous(lows) && contiguous(highs), 'each run of live creates is whole, with no gap')
  t.ok(lows.length - highs.length === 0 || lows.length - highs.length === 1, `pairs are whole but for the last one (${lows.length} and ${highs.length}): one moment's view`)
})

t.test('killed midway, a re-run finishes the job and duplicates nothing', async (t) => {
  const total = 200_000
  const source = bulkSqlite(t.testdir(), total)
  const target = await freshDatabaseUrl()
  const client = new pg.Client({ connectionString: target })
  await client.connect()
  t.teardown(() => client.end())
  const countTarget = async () => {
    try {
      return Number((await client.query('SELECT count(*) FROM plants')).rows[0].count)
    } catch {
      return 0 // not migrated yet
    }
  }
  const first = startCopy(source, target)
  let copied = 0
  while ((copied = await countTarget()) < total / 10) await sleep(20)
  first.child.kill('SIGKILL')
  const killed = await first.done
  t.equal(killed.code, null, 'the first run was killed')
  const partial = await countTarget()
  t.ok(partial >= copied && partial < total, `killed midway: ${partial} of ${total} copied`)

  const rerun = await copy(source, target)
  t.equal(rerun.code, 0, 'the re-run exits 0', rerun)
  const [, done, skipped] = /(\d[\d,]*) copied, (\d[\d,]*) already there/.exec(rerun.stdout)!.map((n) => Number(n.replaceAll(',', '')))
  t.equal(done + skipped, total, 'the re-run copies what is missing and skips what is there')
  t.ok(skipped >= partial, `it skipped the ${skipped} already copied`)
  t.match(rerun.stdout, /check: the target holds the snapshot exactly \(200,000 plants/)
  t.equal(await countTarget(), total, 'nothing duplicated')
})

t.test('a different plant under an id in the target: reported, never overwritten, exit 1', async (t) => {
  const dir = t.testdir()
  const source = `sqlite:${join(dir, 'source.db')}`
  const target = `sqlite:${join(dir, 'target.db')}`
  await fill(source, [{ id: 1n, name: 'Fern' }, { id: 5n, name: 'Palm', tag: 'indoor' }, { id: 9n, name: 'Cactus' }])
  await fill(target, [{ id: 5n, name: 'Palm', tag: 'outdoor' }, { id: 9n, name: 'Cactus' }])
  const run = await copy(source, target)
  t.equal(run.code, 1, 'exit 1')
  t.match(run.stdout, '3 plants in the snapshot: 1 copied, 1 already there (skipped), 1 conflicts, 0 refused')
  t.match(run.stdout, /conflicts: the target holds a different plant under 1 id\(s\), kept as it was: 5\n/)
  t.match(run.stdout, /check FAILED/, 'the check sees the target differ from the snapshot')
  t.same(await plantsOf(target), [{ id: 1n, name: 'Fern' }, { id: 5n, name: 'Palm', tag: 'outdoor' }, { id: 9n, name: 'Cactus' }], 'the target\'s plant is kept')
})

t.test('input it cannot start from: one line naming the problem, exit 2, nothing written, the source untouched', async (t) => {
  const dir = t.testdir()
  const source = `sqlite:${join(dir, 'source.db')}`
  await fill(source, [{ id: 1n, name: 'Fern' }])
  const sourcePath = join(dir, 'source.db')
  const sourceHash = fileHash(sourcePath)
  const fresh = `sqlite:${join(dir, 'fresh.db')}`

  const newer = join(dir, 'newer.db')
  const db = new Database(newer)
  db.pragma('user_version = 2')
  db.close()
  const newerHash = fileHash(newer)
  const unmigrated = join(dir, 'unmigrated.db')
  new Database(unmigrated).close()
  writeFileSync(join(dir, 'notes.txt'), 'not a database')
  symlinkSync(sourcePath, join(dir, 'link.db'))
  const postgres = await freshDatabaseUrl()
  await fill(postgres, []) // a store, migrated and empty
  const newerPostgres = await freshDatabaseUrl()
  await fill(newerPostgres, [])
  const pgClient = new pg.Client({ connectionString: newerPostgres })
  await pgClient.connect()
  await pgClient.query('INSERT INTO schema_migrations (version) VALUES (2)')
  await pgClient.end()
  const samePostgres = new URL(postgres)
  samePostgres.hostname = 'localhost'

  const cases: Array<[string, string, string, RegExp]> = [
    ['an unknown scheme', 'mysql://db/plants', fresh, /the source: "mysql:\/\/db\/plants" is not a store URL: use sqlite:<path> or postgres:/],
    ['no scheme', join(dir, 'plants.db'), fresh, /is not a store URL/],
    ['an empty path', 'sqlite:', fresh, /is not a store URL/],
    ['a wrong target URL', source, 'sqlite', /the target: "sqlite" is not a store URL/],
    ['a source that does not exist', `sqlite:${join(dir, 'missing.db')}`, fresh, /cannot read the source .*missing\.db: .* does not exist/],
    ['a source that is no database', `sqlite:${join(dir, 'notes.txt')}`, fresh, /cannot read the source .*: file is not a database/],
    ['a source that holds no store', `sqlite:${unmigrated}`, fresh, /holds no Plant Store/],
    ['a source database that does not exist', postgres.replace(/\/[^/]+$/, '/missing_db'), fresh, /cannot read the source .*missing_db.*does not exist/],
    ['a target at a newer schema', source, `sqlite:${newer}`, /the target .*newer\.db is at schema version 2, newer than this copy of Plant Store knows \(1\)/],
    ['a PostgreSQL target at a newer schema', source, newerPostgres, /is at schema version 2, newer than this copy of Plant Store knows \(1\)/],
    ['the same file', source, source, /are the same store/],
    ['the same file by a link', source, `sqlite:${join(dir, 'link.db')}`, /are the same store/],
    ['the same database under another host name', postgres, samePostgres.href, /are the same store/]
  ]
  // Each case in this process (a command each would take seconds to start), then the command itself.
  for (const [what, from, to, message] of cases) {
    const refused = await copyStore(from, to).then(() => undefined, (err: Error) => err)
    t.type(refused, CopyInputError, `${what}: refused as input`)
    t.match(refused?.message, message, `${what}: says why`)
    t.notMatch(refused?.message, /\n/, `${what}: in one line`)
  }
  t.notOk(existsSync(join(dir, 'fresh.db')), 'no target was made')
  t.equal(fileHash(newer), newerHash, 'the newer target is unchanged')
  const newerClient = new pg.Client({ connectionString: newerPostgres })
  await newerClient.connect()
  t.same((await newerClient.query('SELECT count(*)::int AS n FROM plants')).rows, [{ n: 0 }], 'nothing written to the newer PostgreSQL target')
  await newerClient.end()
  t.same(await plantsOf(postgres), [], 'nothing written to the same PostgreSQL database')

  for (const [what, args, message] of [
    ['an unknown scheme', ['mysql://db/plants', fresh], /^copy-store: the source: "mysql:\/\/db\/plants" is not a store URL/],
    ['the same file by a link', [source, `sqlite:${join(dir, 'link.db')}`], /^copy-store: .* are the same store$/],
    ['one argument', [source], /^usage: npm run copy-store -- <from> <to>/],
    ['an empty argument', [source, ''], /^copy-store: the target: "" is not a store URL/]
  ] as const) {
    const run = await copy(...args)
    t.equal(run.code, 2, `the command, ${what}: exit 2`)
    t.match(run.stderr.trim(), message, `the command, ${what}: says why`)
    t.equal(run.stderr.trim().split('\n').length, 1, `the command, ${what}: in one line, with no stack trace`)
    t.equal(run.stdout, '', `the command, ${what}: nothing else`)
  }
  t.notOk(existsSync(join(dir, 'fresh.db')), 'still no target')
  t.equal(fileHash(sourcePath), sourceHash, 'the source file is unchanged')
})
