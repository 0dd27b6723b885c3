import { StoreTimeoutError } from '../errors.js'

/**
 * A read's bound, as a create's is its group commit's: the store's answer, or StoreTimeoutError
 * (503) once `ms` have passed, whatever the store does meanwhile (a disk stuck in fsync, a
 * database silent mid-statement). The work itself is not cancelled: the store's own timeouts end it.
 */
export async function withDeadline<T> (work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new StoreTimeoutError()), ms) })])
  } finally {
    clearTimeout(timer)
  }
}
