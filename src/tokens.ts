import { timingSafeEqual } from 'node:crypto'

/**
 * The accepted bearer tokens, replaceable while running (SIGHUP re-reads API_TOKENS_FILE).
 * A check compares the candidate with every token, in constant time each and without
 * stopping at a match, so its timing tells nothing about which token, or how much of one, matched.
 */
export class TokenSet {
  #tokens: Buffer[] = []

  constructor (tokens: string[]) {
    this.replace(tokens)
  }

  replace (tokens: string[]): void {
    if (tokens.length === 0) throw new Error('at least one API token is needed')
    this.#tokens = tokens.map((token) => Buffer.from(token))
  }

  has (candidate: string): boolean {
    const given = Buffer.from(candidate)
    let found = false
    for (const token of this.#tokens) {
      // Same-length inputs only; a self-comparison keeps the time the same on a length mismatch.
      const equal = token.length === given.length ? timingSafeEqual(token, given) : !timingSafeEqual(token, token)
      found = equal || found
    }
    return found
  }
}
