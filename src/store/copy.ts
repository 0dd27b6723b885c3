import { hash, randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import pg from 'pg'
import { openStore } from './open.ts'
import { openSnapshot, storeVersion, type Snapshot } from './snapshot.ts'
import type { CreateOutcome, StoredPlant } from './store.ts'
import { redactUrl } from '../config/redact.ts'
import { parseStoreUrl, type StoreUrl } from './url.ts'

// Copies every plant of one store into another (npm run copy-store): a backup, the move from
// SQLite to PostgreSQL, a restore. The source is read in one snapshot while its service may keep
// writing; the target is opened as the service opens it (its migrations run first) and each page
// of plants is committed as one batch of creates, through the code that commits the service's:
// a plant already there is skipped, a different one under the same id is a conflict and is never
// overwritten, and a re-run after an interruption finishes the job. Once the target is closed
// (synced), it is checked against the snapshot: counts, and a sum of each plant's hash that no
// order changes, taken of the snapshot as the copy reads it and of the target by the same ids.

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
  /** The snapshot's plants as the snapshot holds them, and as the target holds them after the copy; the seconds the target's reading took. */
  check: { source: Tally, target: Tally, seconds: number }
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
    const { tally, ...result } = await write(source, toUrl, onProgress)
    const copied = performance.now()
    const target = await check(source, to, onProgress)
    return { ...result, seconds: (copied - started) / 1000, check: { source: tally, target, seconds: (performance.now() - copied) / 1000 } }
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

/**
 * Runs `each` on every page as `pages` yields it, at most `limit` at once, so that the next page
 * is read while those are under way; the first failure ends it, once the others have settled.
 */
async function eachPage<T> (pages: AsyncIterable<T>, limit: number, each: (page: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>()
  try {
    for await (const page of pages) {
      const run: Promise<void> = each(page).finally(() => running.delete(run))
      running.add(run)
      if (running.size >= limit) await Promise.race(running)
    }
    await Promise.all(running)
  } catch (err) {
    await Promise.allSettled(running)
    throw err
  }
}

async function write (source: Snapshot, toUrl: string, onProgress: CopyOptions['onProgress']): Promise<Omit<CopyResult, 'seconds' | 'check'> & { tally: Tally }> {
  const store = await openStore(toUrl, { pgPoolSize: PAGES_IN_FLIGHT })
  const counts: Record<CreateOutcome, number> = { created: 0, replayed: 0, conflict: 0 }
  const conflicts: bigint[] = []
  const refused: CopyResult['refused'] = { count: 0, examples: [] }
  // The snapshot's checksum, taken as its pages go by: the check reads the source only for ids.
  const snapshot = new Checksum()
  let done = 0
  // Each page is one commit, written as the service writes a batch of creates: a plant the target
  // refuses is counted and the copy goes on; the target failing ends it.
  const commit = async (page: StoredPlant[]): Promise<void> => {
    const writing = store.createMany(page)
    snapshot.add(page)
    const results = await writing
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
  try {
    await eachPage(source.pages(PAGE), PAGES_IN_FLIGHT, commit)
  } catch (err) {
    throw new Error(`the target failed: ${(err as Error).message}; what was written is kept, and a re-run finishes the copy`)
  } finally {
    await store.close()
  }
  return { total: source.count, copied: counts.created, skipped: counts.replayed, conflicts: { count: counts.conflict, ids: conflicts }, refused, tally: snapshot.tally }
}

/** The snapshot's ids in the target: their count and checksum, to compare with the snapshot's. */
async function check (source: Snapshot, to: StoreUrl, onProgress: CopyOptions['onProgress']): Promise<Tally> {
  const target = await openSnapshot(to, { readers: PAGES_IN_FLIGHT })
  const found = new Checksum()
  let checked = 0
  try {
    await eachPage(source.ids(PAGE), PAGES_IN_FLIGHT, async (ids) => {
      found.add(await target.find(ids))
      checked += ids.length
      onProgress?.('checked', checked, source.count)
    })
  } finally {
    await target.close()
  }
  return found.tally
}

const HALF = 2 ** 32

/**
 * An order-free checksum of plants: their count, and the sum of each one's SHA-256 (its first 64
 * bits) modulo 2^64, kept as two 32-bit halves in plain numbers (a BigInt a plant cost more than
 * its hash).
 */
class Checksum {
  #count = 0
  #high = 0
  #low = 0

  add (plants: StoredPlant[]): void {
    for (const { id, name, tag } of plants) {
      const digest = hash('sha256', JSON.stringify([String(id), name, tag ?? null]), 'buffer')
      this.#low += digest.readUInt32BE(4)
      this.#high += digest.readUInt32BE(0) + (this.#low >= HALF ? 1 : 0)
      this.#low %= HALF
      this.#high %= HALF
    }
    this.#count += plants.length
  }

  get tally (): Tally {
    return { count: this.#count, sum: BigInt(this.#high) * BigInt(HALF) + BigInt(this.#low) }
  }
}
