import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { StoreUnavailableError } from '../errors.ts'
import { withDeadline } from './deadline.ts'
import { DEFAULT_BOUNDS, GroupCommit, type GroupCommitOptions } from './group-commit.ts'
import type { Call, Columns, Opened, Reply, WorkerError, WorkerRowResult } from './sqlite-worker.ts'
import type { PlantStore, RowResult, StoredPlant } from './store.ts'

// The event loop's end of the SQLite store: the connection itself lives in a worker thread
// (sqlite-worker.ts), so a slow disk delays commits, never the other requests. A worker that dies
// fails only the calls it had not answered (none of them acknowledged), the store answers 503
// while a new one opens, and the service recovers by itself.

// Beside this file: .js in dist/, .ts when the tests run the source.
const WORKER_URL = new URL(`./sqlite-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

// Most creates one transaction commits; a larger queue is committed in several.
const MAX_BATCH = 256
// Most batches handed to the worker and not yet answered: one being written while the others'
// syncs are under way, in libuv's thread pool, whose 4 threads would queue any more.
const MAX_IN_FLIGHT = 4
// Waits between attempts to replace a dead worker, doubling up to the last.
const RESTART_DELAYS_MS = [50, 100, 200, 500, 1000, 2000, 5000]

export type SqliteOptions = Pick<GroupCommitOptions, 'observer' | 'timeoutMs' | 'maxPending' | 'tracer'> & {
  /** Told when the worker dies, before it is replaced. */
  onWorkerExit?: (err: Error) => void
}

export interface SqliteStore extends PlantStore {
  /** The thread that holds the connection; undefined while it is being replaced. */
  readonly worker: Worker | undefined
}

/** An error from the worker as this side throws it: unavailable (503) or a fault (500). */
function fromWorker (error: WorkerError): Error {
  if (error.unavailable) return new StoreUnavailableError({ cause: error })
  return Object.assign(new Error(error.message), { code: error.code })
}

/** A batch as it crosses to the worker (sqlite-worker.ts, Columns). */
function columns (plants: StoredPlant[]): Columns {
  return { ids: plants.map((plant) => plant.id), names: plants.map((plant) => plant.name), tags: plants.map((plant) => plant.tag ?? null) }
}

interface Connection {
  worker: Worker
  call: (request: Call) => Promise<unknown>
}

/** Starts a worker on the file; resolves once it has opened and migrated the database. */
async function connect (path: string, onExit: (err: Error) => void): Promise<Connection> {
  // No loader in the worker (see sqlite-worker.ts): a TypeScript loader would compile afresh in
  // each new thread, a second or more per store under the tests.
  const worker = new Worker(WORKER_URL, { workerData: { path }, execArgv: [] })
  const waiting = new Map<number, { resolve: (value: unknown) => void, reject: (err: unknown) => void }>()
  let next = 0
  let died: Error | undefined
  worker.on('error', (err) => { died = err })
  await new Promise<void>((resolve, reject) => {
    worker.once('message', (first: Opened) => { if (first.opened) resolve(); else reject(fromWorker(first.error)) })
    worker.once('exit', (code) => reject(died ?? new Error(`the SQLite worker exited with code ${code} while opening the database`)))
  })
  worker.on('message', (reply: Reply) => {
    const call = waiting.get(reply.id)
    waiting.delete(reply.id)
    if (reply.ok) call?.resolve(reply.value)
    else call?.reject(fromWorker(reply.error))
  })
  worker.once('exit', (code) => {
    const err = new StoreUnavailableError({ cause: died ?? new Error(`the SQLite worker exited with code ${code}`) })
    for (const call of waiting.values()) call.reject(err)
    waiting.clear()
    onExit(err)
  })
  return {
    worker,
    call: (request) => new Promise((resolve, reject) => {
      const id = next++
      waiting.set(id, { resolve, reject })
      worker.postMessage({ ...request, id })
    })
  }
}

export async function openSqliteStore (path: string, { onWorkerExit, ...bounds }: SqliteOptions = {}): Promise<SqliteStore> {
  let closing = false
  let restarts = 0
  let connection: Connection | undefined
  const replace = (err: Error): void => {
    connection = undefined
    if (closing) return
    onWorkerExit?.(err)
    setTimeout(() => {
      connect(path, replace).then((opened) => {
        restarts = 0
        if (closing) opened.call({ op: 'close' }).catch(() => {})
        else connection = opened
      }, replace)
    }, RESTART_DELAYS_MS[Math.min(restarts++, RESTART_DELAYS_MS.length - 1)]).unref()
  }
  connection = await connect(path, replace)

  const call = async (request: Call): Promise<unknown> => {
    if (connection === undefined) throw new StoreUnavailableError()
    return await connection.call(request)
  }
  const commit = async (plants: StoredPlant[]): Promise<RowResult[]> =>
    (await call({ op: 'commit', plants: columns(plants) }) as WorkerRowResult[]).map((result) => typeof result === 'string' ? result : { error: fromWorker(result.error) })
  const group = new GroupCommit(commit, { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT, ...bounds })
  // A read waits no longer than a create.
  const readTimeoutMs = bounds.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs

  return {
    get worker () { return connection?.worker },
    create: (plant) => group.create(plant),
    createMany: commit,
    get: async (key) => await withDeadline(call({ op: 'get', key }), readTimeoutMs) as StoredPlant | undefined,
    ping: async () => { await call({ op: 'ping' }) },
    async close () {
      closing = true
      await group.drain()
      const closed = connection
      connection = undefined
      if (closed === undefined) return
      const exited = new Promise((resolve) => closed.worker.once('exit', resolve))
      await closed.call({ op: 'close' })
      await exited
    }
  }
}
