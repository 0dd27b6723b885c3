import { StoreTimeoutError } from '../errors.ts'

/**
 * A bound on a wait for something outside the process: the work's answer, or `timedOut()`'s
 * error once `ms` have passed, whatever the other side does meanwhile (a disk stuck in fsync, a
 * database silent mid-statement, a key server that hangs). The work itself is not cancelled: its
 * own timeouts end it. By default the error is the store's 503, StoreTimeoutError.
 */
export async function withDeadline<T> (work: Promise<T>, ms: number, timedOut: () => Error = () => new StoreTimeoutError()): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(timedOut()), ms) })])
  } finally {
    clearTimeout(timer)
  }
}
