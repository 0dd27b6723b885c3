// A ratio sampler's verdict on a new trace, reached on its id's random words (tracing.ts uses it in
// Tracing.arrive). Its own module so that its unit test loads nothing of the SDK's set-up.

/**
 * A new trace under a ratio sampler (traceidratio, or parentbased_traceidratio with no caller's
 * trace): its id drawn as the SDK's RandomIdGenerator draws one (four random 32-bit words, never
 * all zero), and judged as TraceIdRatioBasedSampler judges it (its four words XORed, below the
 * ratio's bound), on the words, before they are written out: a dropped request never formats an id,
 * which measured some 4% of its CPU (docs/performance.md, "Traces").
 */
export class FreshTraceRatio {
  readonly #bound: number
  readonly #id = Buffer.allocUnsafe(16)

  constructor (ratio: number) {
    // The SDK's bound for a ratio from 0 to 1.
    this.#bound = ratio >= 1 ? 2 ** 32 : Math.floor(Math.max(ratio, 0) * 0xffffffff)
  }

  /** A new trace's id, if the ratio keeps it; undefined if it drops it. */
  keep (): string | undefined {
    const a = word()
    const b = word()
    const c = word()
    let d = word()
    if ((a | b | c | d) === 0) d = 1
    if (((a ^ b ^ c ^ d) >>> 0) >= this.#bound) return undefined
    this.#id.writeUInt32BE(a, 0)
    this.#id.writeUInt32BE(b, 4)
    this.#id.writeUInt32BE(c, 8)
    this.#id.writeUInt32BE(d, 12)
    return this.#id.toString('hex')
  }
}

/** A random 32-bit word, as the SDK's ids are made of. */
const word = (): number => (Math.random() * 2 ** 32) >>> 0
