import t from 'tap'
import { TokenSet } from '../../src/security/tokens.ts'

t.test('matches exactly one of the tokens, and nothing else', async (t) => {
  const tokens = new TokenSet(['first-token-0123456789', 'second-token-0123456789'])
  const first = tokens.identify('first-token-0123456789')
  const second = tokens.identify('second-token-0123456789')
  t.type(first, 'string')
  t.type(second, 'string')
  t.not(first, second, 'each token has its own identity')
  t.notMatch(`${first}${second}`, /token/, 'an identity does not spell its token')
  t.equal(tokens.identify('first-token-0123456789'), first, 'and keeps it')
  for (const candidate of ['', 'first-token-012345678', 'first-token-01234567890', 'FIRST-TOKEN-0123456789', 'first-token-0123456789 ']) {
    t.equal(tokens.identify(candidate), undefined, JSON.stringify(candidate))
  }
})

t.test('can be replaced, never with nothing', async (t) => {
  const tokens = new TokenSet(['old-token-0123456789ab'])
  tokens.replace(['new-token-0123456789ab'])
  t.equal(tokens.identify('old-token-0123456789ab'), undefined)
  t.type(tokens.identify('new-token-0123456789ab'), 'string')
  t.throws(() => tokens.replace([]), /at least one API token/)
  t.type(tokens.identify('new-token-0123456789ab'), 'string', 'a refused replacement changes nothing')
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
      for (let i = 0; i < 500; i++) set.identify(candidate)
      runs.push(Number(process.hrtime.bigint() - start))
    }
    return Math.min(...runs)
  }
  cost(tokens[0]) // warm up
  const costs = [cost(tokens[0]), cost(tokens[199]), cost('token-9999-abcdefghijklmnop'), cost('short')]
  const spread = Math.max(...costs) / Math.min(...costs)
  t.ok(spread < 10, `first match, last match, no match, wrong length cost alike (spread ${spread.toFixed(2)}×)`)
})
