import { StoreBusyError, StoreTimeoutError } from '../errors.ts'
import type { CreateOutcome, RowResult, StoredPlant } from './store.ts'

// Group commit, for both stores: the creates that arrive in one event-loop turn are committed
// together, as one transaction (one fsync, or one WAL flush), and each caller hears back only
// after the commit that holds its row. While `maxInFlight` commits are under way, new creates
// wait and go in the next batch, so batches grow with the load.
//
// Every wait is bounded, whatever the store does: a create is answered within `timeoutMs`
// (StoreTimeoutError past it), and past `maxPending` creates waiting for a commit a new one is
// refused at once (StoreBusyError), so a stuck disk or database holds a bounded amount of memory.
// A create answered by its timeout still waits for its commit, and counts, until the store answers.
// Creates share one timeout and arrive in order, so one timer, set for the oldest unanswered
// create's deadline, bounds them all: no timer per create.
// With traces on, each commit is one span linked to the creates it holds (a CommitTracer).

/** STORE_TIMEOUT_MS and MAX_PENDING_CREATES when unset. */
export const DEFAULT_BOUNDS = {
  timeoutMs: 10_000,
  // As many as the default connection cap (MAX_CONNECTIONS): a healthy instance never reaches
  // it, while clients retrying against a stuck store cannot pile up creates without end.
  maxPending: 1024
}

/**
 * Commits a batch of creates, in arrival order, and answers each; throws when the whole batch
 * failed (the store is unreachable, say), in which case nothing of it was written.
 */
export type CommitBatch = (plants: StoredPlant[]) => RowResult[] | Promise<RowResult[]>

/** Told of each commit and each answered create: what the metrics count. */
export interface StoreObserver {
  committed: (size: number, seconds: number) => void
  answered: (outcome: CreateOutcome) => void
  /** How many creates wait for a commit now, queued or being committed. */
  pending: (depth: number) => void
  /** How long a create waited from its arrival to its commit's answer. */
  waited: (seconds: number) => void
}

/**
 * Traces each commit as one span linked to the creates it holds (ops/trace-spans.ts implements
 * it, with OpenTelemetry). Without one, nothing is captured or traced.
 */
export interface CommitTracer {
  /** The trace context a create arrives in, kept with it until its commit. */
  capture: () => unknown
  /** Runs a commit in its span, linked to the captured contexts of its creates. */
  trace: (links: unknown[], commit: () => Promise<RowResult[]>) => Promise<RowResult[]>
}

export interface GroupCommitOptions {
  /** Most creates one commit takes; a longer queue is committed in several. */
  maxBatch: number
  /** Most commits under way at once: 1 for a synchronous driver, up to the pool size for a networked one. */
  maxInFlight: number
  /** Longest a create waits for its answer, in ms. */
  timeoutMs?: number
  /** Most creates waiting for a commit. */
  maxPending?: number
  observer?: StoreObserver
  tracer?: CommitTracer
}

interface Pending {
  plant: StoredPlant
  arrived: number
  /** The create's trace context, when commits are traced. */
  link: unknown
  /** The store answered it (or it timed out). */
  answered: boolean
  resolve: (outcome: CreateOutcome) => void
  reject: (err: unknown) => void
}

export class GroupCommit {
  readonly #commit: CommitBatch
  readonly #options: GroupCommitOptions
  readonly #timeoutMs: number
  readonly #maxPending: number
  #queue: Pending[] = []
  /** Creates the store has not answered, oldest first from index #oldest: what the deadline watches. */
  #unanswered: Pending[] = []
  #oldest = 0
  #deadline: NodeJS.Timeout | undefined
  #inFlight = 0
  #pending = 0
  #scheduled = false
  #idle: Array<() => void> = []

  constructor (commit: CommitBatch, options: GroupCommitOptions) {
    this.#commit = commit
    this.#options = options
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs
    this.#maxPending = options.maxPending ?? DEFAULT_BOUNDS.maxPending
  }

  /** Resolves once the create's outcome is committed; rejects when the store cannot say in time. */
  create (plant: StoredPlant): Promise<CreateOutcome> {
    if (this.#pending >= this.#maxPending) return Promise.reject(new StoreBusyError())
    this.#pending++
    this.#options.observer?.pending(this.#pending)
    return new Promise((resolve, reject) => {
      const pending: Pending = { plant, arrived: performance.now(), link: this.#options.tracer?.capture(), answered: false, resolve, reject }
      this.#queue.push(pending)
      this.#unanswered.push(pending)
      this.#deadline ??= setTimeout(this.#expire, this.#timeoutMs)
      this.#schedule()
    })
  }

  /** Answers every create past its deadline with StoreTimeoutError, then waits for the next oldest's. */
  readonly #expire = (): void => {
    this.#deadline = undefined
    const now = performance.now()
    for (; this.#oldest < this.#unanswered.length; this.#oldest++) {
      const pending = this.#unanswered[this.#oldest]
      if (pending.answered) continue
      const left = pending.arrived + this.#timeoutMs - now
      if (left > 0) {
        this.#deadline = setTimeout(this.#expire, left)
        break
      }
      pending.answered = true
      pending.reject(new StoreTimeoutError())
    }
    this.#forgetAnswered()
  }

  /** Drops the answered creates at the head of #unanswered; with none left, the deadline too. */
  #forgetAnswered (): void {
    while (this.#oldest < this.#unanswered.length && this.#unanswered[this.#oldest].answered) this.#oldest++
    if (this.#oldest === this.#unanswered.length) {
      this.#unanswered = []
      this.#oldest = 0
      clearTimeout(this.#deadline)
      this.#deadline = undefined
    } else if (this.#oldest > 1024 && this.#oldest * 2 > this.#unanswered.length) {
      // Under steady load the list may never empty: the answered creates before the oldest are
      // let go now and then, so it holds what is unanswered and little else.
      this.#unanswered = this.#unanswered.slice(this.#oldest)
      this.#oldest = 0
    }
  }

  /** Resolves once every create handed in so far has been answered. */
  async drain (): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return
    await new Promise<void>((resolve) => this.#idle.push(resolve))
  }

  #schedule (): void {
    if (this.#scheduled || this.#inFlight >= this.#options.maxInFlight || this.#queue.length === 0) return
    this.#scheduled = true
    // After this turn's I/O callbacks, so that every create of the turn is in the batch.
    setImmediate(() => {
      this.#scheduled = false
      while (this.#queue.length > 0 && this.#inFlight < this.#options.maxInFlight) {
        this.#run(this.#queue.splice(0, this.#options.maxBatch)) // settles every create itself; never rejects
      }
    })
  }

  async #run (batch: Pending[]): Promise<void> {
    this.#inFlight++
    const started = performance.now()
    let results: RowResult[] | undefined
    let failed: unknown
    const commit = async (): Promise<RowResult[]> => await this.#commit(batch.map(({ plant }) => plant))
    const { tracer } = this.#options
    try {
      results = await (tracer === undefined ? commit() : tracer.trace(batch.map(({ link }) => link), commit))
    } catch (err) {
      failed = err
    }
    this.#inFlight--
    const { observer } = this.#options
    const answered = performance.now()
    this.#pending -= batch.length
    for (const pending of batch) {
      observer?.waited((answered - pending.arrived) / 1000)
    }
    observer?.pending(this.#pending)
    if (results === undefined) {
      for (const pending of batch) pending.reject(failed)
    } else {
      observer?.committed(batch.length, (performance.now() - started) / 1000)
      results.forEach((result, i) => {
        if (typeof result === 'string') {
          observer?.answered(result)
          batch[i].resolve(result)
        } else {
          batch[i].reject(result.error)
        }
      })
    }
    // Settling a promise twice does nothing: a create its deadline answered keeps that answer.
    for (const pending of batch) pending.answered = true
    this.#forgetAnswered()
    this.#schedule()
    if (this.#queue.length === 0 && this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve()
  }
}
