import t from 'tap'
import { MAX_ENTRIES, TokenCache } from '../../src/security/token-cache.ts'

// The verified-token cache's bounds, with the clock passed in.

t.test('an entry lives until the sooner of its exp and a minute', async (t) => {
  const cache = new TokenCache<string>()
  const now = 1_000_000_000_000
  cache.set('soon', 'a', now / 1000 + 5, now)
  cache.set('late', 'b', now / 1000 + 3600, now)
  t.equal(cache.get('soon', now + 4_999), 'a')
  t.equal(cache.get('soon', now + 5_000), undefined, 'gone at its exp')
  t.equal(cache.get('late', now + 59_999), 'b')
  t.equal(cache.get('late', now + 60_000), undefined, 'gone after a minute')
  t.equal(cache.size, 0, 'and removed')
})

t.test('bounded: past the bound the oldest goes; clear empties it', async (t) => {
  const cache = new TokenCache<number>()
  const exp = Date.now() / 1000 + 3600
  for (let i = 0; i <= MAX_ENTRIES; i++) cache.set(`k${i}`, i, exp)
  t.equal(cache.size, MAX_ENTRIES)
  t.equal(cache.get('k0'), undefined, 'the oldest went')
  t.equal(cache.get(`k${MAX_ENTRIES}`), MAX_ENTRIES)
  cache.clear()
  t.equal(cache.size, 0)
})

t.test('keys are a hash of the whole token, never the token', async (t) => {
  const key = TokenCache.key('header.payload.signature')
  t.match(key, /^[\w-]{43}$/)
  t.not(key, TokenCache.key('header.payload.signaturf'), 'every character counts')
})
