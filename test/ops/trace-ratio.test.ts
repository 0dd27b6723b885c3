import { ROOT_CONTEXT, SamplingDecision } from '@opentelemetry/api'
import { RandomIdGenerator, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace'
import t from 'tap'
import { FreshTraceRatio } from '../../src/ops/trace-ratio.ts'

// A new trace under a ratio sampler is judged on its id's words before the id is written out: the
// verdict and the id must be the SDK's own. Each draw is made twice from the same random numbers
// (Math.random replayed): by FreshTraceRatio, and by the SDK's RandomIdGenerator, whose id the SDK's
// TraceIdRatioBasedSampler then judges.

const WORD = 2 ** 32

/** Both draws from the same four random numbers: ours, and the SDK's id with its sampler's verdict. */
function drawBoth (fresh: FreshTraceRatio, ratio: number, numbers: number[]): { ours: string | undefined, sdk: string | undefined } {
  const random = Math.random
  try {
    let i = 0
    Math.random = () => numbers[i++]!
    const ours = fresh.keep()
    i = 0
    const id = new RandomIdGenerator().generateTraceId()
    const kept = new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, id).decision === SamplingDecision.RECORD_AND_SAMPLED
    return { ours, sdk: kept ? id : undefined }
  } finally {
    Math.random = random
  }
}

const RATIOS = [0, 0.1, 0.5, 1 / 3, 0.999999, 1]

t.test('random draws: the same verdict and the same id as the SDK\'s', async (t) => {
  for (const ratio of RATIOS) {
    const fresh = new FreshTraceRatio(ratio)
    let kept = 0
    const differ: unknown[] = []
    for (let n = 0; n < 20_000; n++) {
      const numbers = [Math.random(), Math.random(), Math.random(), Math.random()]
      const { ours, sdk } = drawBoth(fresh, ratio, numbers)
      if (ours !== sdk) differ.push({ numbers, ours, sdk })
      if (ours !== undefined) kept++
    }
    t.same(differ, [], `ratio ${ratio}: no draw judged or written otherwise`)
    // Binomial(20000, ratio): within 5 standard deviations (at most 354) of its mean.
    t.ok(Math.abs(kept - 20_000 * ratio) <= 360, `ratio ${ratio}: ${kept} of 20000 kept`)
  }
})

t.test('at the ratio\'s bound, and an id of zeros, as the SDK\'s', async (t) => {
  for (const ratio of RATIOS) {
    const fresh = new FreshTraceRatio(ratio)
    const bound = Math.floor(ratio * 0xffffffff)
    // Words whose XOR (what the SDK's sampler compares) falls just below, at and above the bound.
    for (const xor of [...new Set([bound - 1, bound, bound + 1, 0, WORD - 1])].filter((x) => x >= 0 && x < WORD)) {
      const [a, b, c] = [0x9e3779b9, 0x7f4a7c15, 0x12345678]
      const d = (a ^ b ^ c ^ xor) >>> 0
      const { ours, sdk } = drawBoth(fresh, ratio, [a, b, c, d].map((word) => word / WORD))
      t.equal(ours, sdk, `ratio ${ratio}, words XORed to ${xor}: ${sdk === undefined ? 'dropped' : 'kept'}`)
    }
    // Four zero words: the SDK sets the id's last byte to 1, and judges that id.
    const { ours, sdk } = drawBoth(fresh, ratio, [0, 0, 0, 0])
    t.equal(ours, sdk, `ratio ${ratio}, four zero words`)
    if (ours !== undefined) t.equal(ours, '00000000000000000000000000000001')
  }
})

t.test('a kept id is a new one each time', async (t) => {
  const fresh = new FreshTraceRatio(1)
  const ids = new Set(Array.from({ length: 1000 }, () => fresh.keep()))
  t.equal(ids.size, 1000)
  t.ok([...ids].every((id) => /^[0-9a-f]{32}$/.test(id!)), 'each 32 lowercase hex digits')
  t.same(drawBoth(fresh, 1, [1, 2, 3, 4].map((word) => word / WORD)), { ours: '00000001000000020000000300000004', sdk: '00000001000000020000000300000004' }, 'the words in order, big-endian')
})
