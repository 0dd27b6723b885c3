import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * The accepted bearer tokens, replaceable while running (SIGHUP re-reads API_TOKENS_FILE).
 * A check compares the candidate with every token, in constant time each and without
 * stopping at a match, so its timing tells nothing about which token, or how much of one, matched.
 */
export class TokenSet {
  #tokens: Array<{ token: Buffer, identity: string }> = []

  constructor (tokens: string[]) {
    this.replace(tokens)
  }

  replace (tokens: string[]): void {
    if (tokens.length === 0) throw new Error('at least one API token is needed')
    // A token's identity is its SHA-256: what may be kept and counted (rate limits) in its stead.
    this.#tokens = tokens.map((token) => ({ token: Buffer.from(token), identity: createHash('sha256').update(token).digest('base64url') }))
  }

  /** The identity of the token the candidate is, or undefined when it is none of them. */
  identify (candidate: string): string | undefined {
    const given = Buffer.from(candidate)
    let found: string | undefined
    for (const { token, identity } of this.#tokens) {
      // Same-length inputs only; a self-comparison keeps the time the same on a length mismatch.
      const equal = token.length === given.length ? timingSafeEqual(token, given) : !timingSafeEqual(token, token)
      found = equal ? identity : found
    }
    return found
  }
}
