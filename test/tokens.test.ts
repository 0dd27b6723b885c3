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
