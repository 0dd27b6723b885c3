import type { CreateOutcome, StoredPlant } from './store.js'

// Group commit, for both stores: the creates that arrive in one event-loop turn are committed
// together, as one transaction (one fsync, or one WAL flush), and each caller hears back only
// after the commit that holds its row. While `maxInFlight` commits are under way, new creates
// wait and go in the next batch, so batches grow with the load.

/** A create's answer from a commit: its outcome, or its own error (a bad row fails alone). */
export type RowResult = CreateOutcome | { error: unknown }

/**
 * Commits a batch of creates, in arrival order, and answers each; throws when the whole batch
 * failed (the store is unreachable, say), in which case nothing of it was written.
 */
export type CommitBatch = (plants: StoredPlant[]) => RowResult[] | Promise<RowResult[]>

/** Told of each commit and each answered create: what the metrics count. */
export interface StoreObserver {
  committed: (size: number, seconds: number) => void
  answered: (outcome: CreateOutcome) => void
}

export interface GroupCommitOptions {
  /** Most creates one commit takes; a longer queue is committed in several. */
  maxBatch: number
  /** Most commits under way at once: 1 for a synchronous driver, up to the pool size for a networked one. */
  maxInFlight: number
  observer?: StoreObserver
}

interface Pending { plant: StoredPlant, resolve: (outcome: CreateOutcome) => void, reject: (err: unknown) => void }

export class GroupCommit {
  readonly #commit: CommitBatch
  readonly #options: GroupCommitOptions
  #queue: Pending[] = []
  #inFlight = 0
  #scheduled = false
  #idle: Array<() => void> = []

  constructor (commit: CommitBatch, options: GroupCommitOptions) {
    this.#commit = commit
    this.#options = options
  }

  /** Resolves once the create's outcome is committed. */
  create (plant: StoredPlant): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ plant, resolve, reject })
      this.#schedule()
    })
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
    try {
      results = await this.#commit(batch.map(({ plant }) => plant))
    } catch (err) {
      failed = err
    }
    this.#inFlight--
    const { observer } = this.#options
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
    this.#schedule()
    if (this.#queue.length === 0 && this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve()
  }
}
