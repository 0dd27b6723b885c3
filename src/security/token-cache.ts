import { hash } from 'node:crypto'

// Verified tokens, remembered so that a client's next request with the same token costs a hash and
// a lookup instead of a signature check (60–110 µs). Only successes are kept, each until the
// sooner of its `exp` and a minute, under a hash of the whole token (never the token); the oldest
// goes first past the bound, and everything goes when the provider's key set changes.

/** Longest a verified token is trusted without checking it again. */
const MAX_AGE_MS = 60_000
/** Most tokens remembered: about a megabyte. */
export const MAX_ENTRIES = 10_000

export class TokenCache<T> {
  readonly #entries = new Map<string, { value: T, until: number }>()

  static key (token: string): string {
    return hash('sha256', token, 'base64url')
  }

  get (key: string, now = Date.now()): T | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until > now) return entry.value
    this.#entries.delete(key)
    return undefined
  }

  /** Remembers a verified token's result until its `exp` (in seconds), or a minute, whichever is sooner. */
  set (key: string, value: T, exp: number, now = Date.now()): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, { value, until: Math.min(exp * 1000, now + MAX_AGE_MS) })
  }

  clear (): void {
    this.#entries.clear()
  }

  get size (): number {
    return this.#entries.size
  }
}
