import t from 'tap'
import { TokenSet } from '../src/tokens.js'

t.test('matches exactly one of the tokens, and nothing else', async (t) => {
  const tokens = new TokenSet(['first-token-0123456789', 'second-token-0123456789'])
  t.ok(tokens.has('first-token-0123456789'))
  t.ok(tokens.has('second-token-0123456789'))
  for (const candidate of ['', 'first-token-012345678', 'first-token-01234567890', 'FIRST-TOKEN-0123456789', 'first-token-0123456789 ']) {
    t.notOk(tokens.has(candidate), JSON.stringify(candidate))
  }
})

t.test('can be replaced, never with nothing', async (t) => {
  const tokens = new TokenSet(['old-token-0123456789ab'])
  tokens.replace(['new-token-0123456789ab'])
  t.notOk(tokens.has('old-token-0123456789ab'))
  t.ok(tokens.has('new-token-0123456789ab'))
  t.throws(() => tokens.replace([]), /at least one API token/)
  t.ok(tokens.has('new-token-0123456789ab'), 'a refused replacement changes nothing')
})

t.test('a check costs the same wherever the match is, or with none', async (t) => {
  // With 200 tokens, stopping at a match would make a first-token match ~100 times cheaper
  // than none; comparing every token keeps them all within noise (a 10× bound) of each other.
  const tokens = Array.from({ length: 200 }, (_, i) => `token-${String(i).padStart(4, '0')}-abcdefghijklmnop`)
  const set = new TokenSet(tokens)
  const cost = (candidate: string): number => {
    const runs: number[] = []
    for (let round = 0; round < 5; round++) {
      const start = process.hrtime.bigint()
      for (let i = 0; i < 500; i++) set.has(candidate)
      runs.push(Number(process.hrtime.bigint() - start))
    }
    return Math.min(...runs)
  }
  cost(tokens[0]) // warm up
  const costs = [cost(tokens[0]), cost(tokens[199]), cost('token-9999-abcdefghijklmnop'), cost('short')]
  const spread = Math.max(...costs) / Math.min(...costs)
  t.ok(spread < 10, `first match, last match, no match, wrong length cost alike (spread ${spread.toFixed(2)}×)`)
})
