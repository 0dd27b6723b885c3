import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { assertError, buildTestApp, captureLog, TOKEN, testConfig, type ConfigOverrides } from '../helpers/app.ts'

// RATE_LIMIT_PER_MINUTE, over real HTTP: each token has its own count; requests with a bad token
// are counted apart, per client address, so they never spend a good token's quota.

const OTHER_TOKEN = 'other-token-0123456789abcdef'
const BAD_TOKEN = 'not-a-token-of-ours-0123456789'
// Seconds left of the minute that began with the first request: 60, less what a slow machine took since.
const MINUTE_LEFT = /^(5\d|60)$/

async function limited (t: Test, env: Record<string, string> = {}, overrides: ConfigOverrides = {}) {
  const log = captureLog()
  const config = await testConfig(t, { API_TOKENS: `${TOKEN},${OTHER_TOKEN}`, RATE_LIMIT_PER_MINUTE: '3', LOG_LEVEL: 'trace', ...env }, overrides)
  const app = await buildTestApp(t, config, { logStream: log.logStream })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  let id = 0
  const post = async (token?: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/plants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
      body: JSON.stringify({ id: ++id, name: 'Fern' })
    })
    return { status: res.status, body: await res.json(), limit: res.headers.get('ratelimit-limit'), remaining: res.headers.get('ratelimit-remaining'), reset: res.headers.get('ratelimit-reset'), retryAfter: res.headers.get('retry-after') }
  }
  return { post, log }
}

t.test('the exact count is allowed, then 429 in the Error shape with Retry-After and the RateLimit headers', async (t) => {
  const { post } = await limited(t)
  for (const remaining of ['2', '1', '0']) {
    t.match(await post(TOKEN), { status: 200, limit: '3', remaining, reset: MINUTE_LEFT, retryAfter: null }, `allowed, ${remaining} left`)
  }
  const refused = await post(TOKEN)
  assertError(t, { statusCode: refused.status, json: () => refused.body }, 429, /^Too many requests; retry in \d+ seconds?|^Too many requests; retry in 1 minute$/)
  t.match(refused, { limit: '3', remaining: '0', reset: MINUTE_LEFT, retryAfter: MINUTE_LEFT }, 'Retry-After and the RateLimit headers')
  t.equal((await post(TOKEN)).status, 429, 'and again')
})

t.test('the count starts again after the window', async (t) => {
  const { post } = await limited(t, {}, { security: { rateLimit: { max: 2, windowMs: 1000 } } })
  t.equal((await post(TOKEN)).status, 200)
  t.equal((await post(TOKEN)).status, 200)
  const refused = await post(TOKEN)
  t.match(refused, { status: 429, reset: '1', retryAfter: '1' }, 'the reset says when')
  await sleep(Number(refused.retryAfter) * 1000 + 100)
  t.match(await post(TOKEN), { status: 200, remaining: '1' }, 'a new window, a whole new quota')
})

t.test('two tokens are counted apart', async (t) => {
  const { post } = await limited(t)
  for (let i = 0; i < 3; i++) t.equal((await post(TOKEN)).status, 200)
  t.equal((await post(TOKEN)).status, 429, 'the first token is spent')
  t.match(await post(OTHER_TOKEN), { status: 200, remaining: '2' }, 'the second has its whole quota')
})

t.test('bad tokens never spend a good token\'s quota; they are limited per client address', async (t) => {
  const { post } = await limited(t)
  t.match(await post(BAD_TOKEN), { status: 401, limit: '3', remaining: '2' }, 'a bad token is counted, against the address')
  t.match(await post(undefined), { status: 401, remaining: '1' }, 'so is no token')
  t.match(await post(BAD_TOKEN), { status: 401, remaining: '0' })
  const refused = await post(BAD_TOKEN)
  t.match(refused, { status: 429, retryAfter: /^\d+$/ }, 'past the limit, this address gets 429, not another 401')
  t.match(await post(TOKEN), { status: 200, remaining: '2' }, 'the good token, from the same address, has its whole quota')
})

t.test('behind a trusted proxy, bad tokens are counted per forwarded client', async (t) => {
  const { post } = await limited(t, { TRUST_PROXY: 'true' })
  const from = (address: string) => ({ 'x-forwarded-for': address })
  for (let i = 0; i < 3; i++) t.equal((await post(BAD_TOKEN, from('203.0.113.7'))).status, 401)
  t.equal((await post(BAD_TOKEN, from('203.0.113.7'))).status, 429, 'one client is spent')
  t.match(await post(BAD_TOKEN, from('198.51.100.9')), { status: 401, remaining: '2' }, 'another client is counted apart')
})

t.test('no token reaches the logs, not even as a rate-limit key', async (t) => {
  const { post, log } = await limited(t)
  for (let i = 0; i < 4; i++) await post(TOKEN)
  for (let i = 0; i < 4; i++) await post(BAD_TOKEN)
  t.ok(log.lines.some((line) => line.statusCode === 429), 'the 429s were logged')
  const raw = log.raw.join('')
  t.notMatch(raw, TOKEN)
  t.notMatch(raw, BAD_TOKEN)
})

t.test('RATE_LIMIT_PER_MINUTE unset: no limit and no RateLimit headers', async (t) => {
  const { post } = await limited(t, {}, { security: { rateLimit: undefined } })
  for (let i = 0; i < 10; i++) t.match(await post(TOKEN), { status: 200, limit: null, remaining: null, reset: null })
})
