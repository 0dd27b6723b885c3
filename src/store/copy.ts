import { hash, randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import pg from 'pg'
import { openStore } from './open.js'
import { openSnapshot, storeVersion, type Snapshot } from './snapshot.js'
import type { CreateOutcome, StoredPlant } from './store.js'
import { redactUrl } from '../config/redact.js'
import { parseStoreUrl, type StoreUrl } from './url.js'

// Copies every plant of one store into another (npm run copy-store): a backup, the move from
// SQLite to PostgreSQL, a restore. The source is read in one snapshot while its service may keep
// writing; the target is opened as the service opens it (its migrations run first) and each page
// of plants is committed as one batch of creates, through the code that commits the service's:
// a plant already there is skipped, a different one under the same id is a conflict and is never
// overwritten, and a re-run after an interruption finishes the job. Once the target is closed
// (synced), it is checked against the snapshot: counts, and a sum of each plant's hash that no
// order changes.

/** Plants read, and committed to the target, at a time: the most one PostgreSQL batch takes. */
const PAGE = 1000
// Pages committed at once, each on a PostgreSQL connection of its own (SQLite's are written one
// after another, and synced side by side): the next page is read while these are written.
const PAGES_IN_FLIGHT = 3
/** How many conflicting or refused ids a result lists; it counts them all. */
export const LISTED = 10

/** Input the copy cannot start from: nothing has been written. */
export class CopyInputError extends Error {
  override name = 'CopyInputError'
}

export interface Tally { count: number, sum: bigint }

export interface CopyResult {
  /** Plants in the snapshot. */
  total: number
  copied: number
  /** Already in the target, the same. */
  skipped: number
  /** A different plant holds the id in the target, which keeps it. */
  conflicts: { count: number, ids: bigint[] }
  /** Plants the target refused (a row error), with why. */
  refused: { count: number, examples: Array<{ id: bigint, message: string }> }
  seconds: number
  /** The snapshot's plants as the snapshot holds them, and as the target holds them after the copy. */
  check: { source: Tally, target: Tally }
}

export interface CopyOptions {
  /** Told after each page is copied, then checked: plants done so far, of the snapshot's total. */
  onProgress?: (phase: 'copied' | 'checked', done: number, total: number) => void
}

export async function copyStore (fromUrl: string, toUrl: string, { onProgress }: CopyOptions = {}): Promise<CopyResult> {
  const started = performance.now()
  const [from, to] = [parseUrl(fromUrl, 'source'), parseUrl(toUrl, 'target')]
  if (sameFile(from, to)) throw new CopyInputError(`${fromUrl} and ${toUrl} are the same store`)
  await checkTarget(to, toUrl)
  const source = await openSnapshot(from).catch((err: Error) => { throw new CopyInputError(`cannot read the source ${redactUrl(fromUrl)}: ${err.message}`) })
  try {
    if (from.kind === 'postgres' && to.kind === 'postgres' && await sameDatabase(from.url, to.url)) {
      throw new CopyInputError(`${redactUrl(fromUrl)} and ${redactUrl(toUrl)} are the same store`)
    }
    const result = await write(source, toUrl, onProgress)
    const seconds = (performance.now() - started) / 1000
    return { ...result, seconds, check: await check(source, to, onProgress) }
  } finally {
    await source.close()
  }
}

function parseUrl (url: string, role: string): StoreUrl {
  try {
    return parseStoreUrl(url)
  } catch (err) {
    throw new CopyInputError(`the ${role}: ${(err as Error).message}`)
  }
}

/** Two SQLite URLs that name one file, however spelled (a link, another path). */
function sameFile (from: StoreUrl, to: StoreUrl): boolean {
  if (from.kind !== 'sqlite' || to.kind !== 'sqlite') return false
  const [a, b] = [statSync(from.path, { throwIfNoEntry: false }), statSync(to.path, { throwIfNoEntry: false })]
  return from.path === to.path || (a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino)
}

/** Whether two PostgreSQL URLs reach one database: the source's server sees the target's session. */
async function sameDatabase (from: string, to: string): Promise<boolean> {
  const name = `plant-store-copy-${randomUUID()}`
  const target = new pg.Client({ connectionString: to, application_name: name })
  const source = new pg.Client({ connectionString: from })
  try {
    await target.connect()
    await source.connect()
    const { rows } = await source.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [name])
    return rows.length > 0
  } finally {
    await Promise.all([target.end(), source.end()])
  }
}

/** The target must be reachable, and no newer than this code: checked before anything is written. */
async function checkTarget (to: StoreUrl, toUrl: string): Promise<void> {
  let version: number
  let known: number
  try {
    ({ version, known } = await storeVersion(to))
  } catch (err) {
    throw new CopyInputError(`cannot open the target ${redactUrl(toUrl)}: ${(err as Error).message}`)
  }
  if (version > known) throw new CopyInputError(`the target ${redactUrl(toUrl)} is at schema version ${version}, newer than this copy of Plant Store knows (${known}); copy with the newer one`)
}

async function write (source: Snapshot, toUrl: string, onProgress: CopyOptions['onProgress']): Promise<Omit<CopyResult, 'seconds' | 'check'>> {
  const store = await openStore(toUrl, { pgPoolSize: PAGES_IN_FLIGHT })
  const counts: Record<CreateOutcome, number> = { created: 0, replayed: 0, conflict: 0 }
  const conflicts: bigint[] = []
  const refused: CopyResult['refused'] = { count: 0, examples: [] }
  let done = 0
  // Each page is one commit, written as the service writes a batch of creates: a plant the target
  // refuses is counted and the copy goes on; the target failing ends it.
  const commit = async (page: StoredPlant[]): Promise<void> => {
    const results = await store.createMany(page)
    results.forEach((result, i) => {
      if (typeof result !== 'string') {
        if (refused.count++ < LISTED) refused.examples.push({ id: page[i].id, message: (result.error as Error).message })
        return
      }
      counts[result]++
      if (result === 'conflict' && conflicts.length < LISTED) conflicts.push(page[i].id)
    })
    done += page.length
    onProgress?.('copied', done, source.count)
  }
  const writing = new Set<Promise<void>>()
  try {
    for await (const page of source.pages(PAGE)) {
      const written: Promise<void> = commit(page).finally(() => writing.delete(written))
      writing.add(written)
      if (writing.size >= PAGES_IN_FLIGHT) await Promise.race(writing)
    }
    await Promise.all(writing)
  } catch (err) {
    await Promise.allSettled(writing)
    throw new Error(`the target failed: ${(err as Error).message}; what was written is kept, and a re-run finishes the copy`)
  } finally {
    await store.close()
  }
  return { total: source.count, copied: counts.created, skipped: counts.replayed, conflicts: { count: counts.conflict, ids: conflicts }, refused }
}

/** The snapshot's plants, and the same ids in the target: counts and order-free sums to compare. */
async function check (source: Snapshot, to: StoreUrl, onProgress: CopyOptions['onProgress']): Promise<CopyResult['check']> {
  const target = await openSnapshot(to)
  const tally = { source: { count: 0, sum: 0n }, target: { count: 0, sum: 0n } }
  try {
    for await (const page of source.pages(PAGE)) {
      add(tally.source, page)
      add(tally.target, await target.find(page.map((plant) => plant.id)))
      onProgress?.('checked', tally.source.count, source.count)
    }
  } finally {
    await target.close()
  }
  return tally
}

const UINT64 = 2n ** 64n - 1n

/** Adds plants to a tally: its count, and the sum of each plant's SHA-256 (its first 64 bits), modulo 2^64, so that no order changes it. */
function add (tally: Tally, plants: StoredPlant[]): void {
  for (const { id, name, tag } of plants) {
    tally.sum = (tally.sum + hash('sha256', JSON.stringify([String(id), name, tag ?? null]), 'buffer').readBigUInt64BE(0)) & UINT64
    tally.count++
  }
}
