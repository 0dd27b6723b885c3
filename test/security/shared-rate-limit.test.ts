import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { buildTestApp, captureLog, TOKEN, testConfig } from '../helpers/app.ts'
import { hasRedis, REDIS_PASSWORD, startRedis, type TestRedis } from '../helpers/redis.ts'

// RATE_LIMIT_REDIS_URL: instances that count each token's requests together, in a real Redis, and
// go on limiting, each on its own at the same limit, while Redis is gone or frozen.

const BAD_TOKEN = 'not-a-token-of-ours-0123456789'
const LIMIT = 3

if (!hasRedis()) t.fail('Debian\'s redis-server is needed (npm test installs it)')

/** An instance counting in `redis`, listening on loopback, with its metrics. */
async function instance (t: Test, redis: TestRedis, env: Record<string, string> = {}) {
  const log = captureLog()
  const config = await testConfig(t, { RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_REDIS_URL: redis.url, METRICS_PORT: '0', LOG_LEVEL: 'info', ...env })
  const app = await buildTestApp(t, config, { logStream: log.logStream })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  let id = 0
  const post = async (token = TOKEN): Promise<{ status: number, ms: number }> => {
    const began = performance.now()
    const res = await fetch(`${base}/plants`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ id: ++id, name: 'Fern' }) })
    await res.arrayBuffer()
    return { status: res.status, ms: performance.now() - began }
  }
  const shared = async (): Promise<string | undefined> => /^plant_store_rate_limit_shared (\d)$/m.exec(await (await fetch(app.metricsUrl!)).text())?.[1]
  /** Resolves once the metric reads `value`, within `ms`; its time. */
  const until = async (value: string, ms = 5000): Promise<number> => {
    const began = performance.now()
    while (await shared() !== value) {
      if (performance.now() - began > ms) throw new Error(`plant_store_rate_limit_shared is not ${value} after ${ms} ms`)
      await sleep(25)
    }
    return performance.now() - began
  }
  await until('1')
  return { post, log, shared, until }
}

const statuses = async (posts: Array<() => Promise<{ status: number }>>): Promise<number[]> => {
  const seen: number[] = []
  for (const post of posts) seen.push((await post()).status)
  return seen
}

t.test('two instances count one token together, and refused tokens by address, under keys of their own', async (t) => {
  const redis = await startRedis(t)
  const [a, b] = [await instance(t, redis), await instance(t, redis)]
  t.same(await statuses([() => a.post(), () => b.post(), () => a.post(), () => b.post(), () => a.post()]), [200, 200, 200, 429, 429], `${LIMIT} in all, across both`)
  t.same(await statuses([() => a.post(BAD_TOKEN), () => b.post(BAD_TOKEN), () => a.post(BAD_TOKEN), () => b.post(BAD_TOKEN)]), [401, 401, 401, 429], 'a refused token counts by address, across both')
  const keys = redis.cli('--scan', '--pattern', '*').split('\n').sort()
  t.equal(keys.length, 2, 'one key a count')
  t.match(keys[0], /^plant-store:rate-limit:address:127\.0\.0\.1$/, 'the address count')
  t.match(keys[1], /^plant-store:rate-limit:token:[\w-]{43}$/, 'the token count, by its identity (a hash), never the token')
  t.equal(redis.cli('GET', keys[1]), '5', 'every request counted')
  t.ok(Number(redis.cli('PTTL', keys[1])) > 50_000, 'within the minute\'s window')
})

t.test('the prefix of the keys is the operator\'s', async (t) => {
  const redis = await startRedis(t)
  const a = await instance(t, redis, { RATE_LIMIT_REDIS_PREFIX: 'shop:limits:' })
  t.equal((await a.post()).status, 200)
  t.match(redis.cli('--scan', '--pattern', '*'), /^shop:limits:token:[\w-]{43}$/)
})

t.test('Redis frozen, then gone: every request answered within the bound, limited on each instance at the same limit, shared again once Redis answers', async (t) => {
  const redis = await startRedis(t)
  const env = { RATE_LIMIT_REDIS_TIMEOUT_MS: '100' }
  const [a, b] = [await instance(t, redis, env), await instance(t, redis, env)]
  t.equal((await a.post()).status, 200, 'one request counted in Redis')

  redis.freeze()
  const frozen = [await a.post(), await a.post(), await a.post(), await a.post(), await b.post()]
  t.same(frozen.map(({ status }) => status), [200, 200, 200, 429, 200], 'each instance counts on its own, at the same limit: never unlimited')
  t.ok(frozen.every(({ ms }) => ms < 1000), `each answered within a second (slowest ${Math.round(Math.max(...frozen.map(({ ms }) => ms)))} ms)`)
  t.equal(await a.shared(), '0', 'the metric says so')
  const warnings = () => a.log.lines.filter((line) => line.msg.startsWith('rate limits: Redis does not answer'))
  t.equal(warnings().length, 1, 'the log says so once')
  t.match(warnings()[0], { level: 40, problem: 'Command timed out' })
  t.notMatch(a.log.raw.join(''), REDIS_PASSWORD, 'never the password')

  redis.thaw()
  const back = await a.until('1')
  t.ok(back < 5000, `shared again within 5 s of Redis answering (${Math.round(back)} ms)`)
  await b.until('1')
  // Each instance's first request of the freeze sent its command before the timeout: Redis ran both as it woke.
  const [key] = redis.cli('--scan', '--pattern', '*token:*').split('\n')
  t.equal(redis.cli('GET', key), '3', 'the shared count holds the request before the freeze and the two whose commands Redis ran as it woke')
  t.same(await statuses([() => a.post(), () => b.post()]), [429, 429], 'counted in Redis again: on from where it was')

  await redis.kill()
  const gone = [await a.post(), await b.post()]
  t.same(gone.map(({ status }) => status), [429, 200], 'gone: a counts on where its own count stood; b on its own')
  t.ok(gone.every(({ ms }) => ms < 1000), 'each answered within a second')
  await redis.start()
  const restarted = await a.until('1')
  t.ok(restarted < 5000, `shared again within 5 s of Redis restarting (${Math.round(restarted)} ms)`)
  t.same(await statuses([() => a.post(), () => b.post(), () => a.post(), () => b.post()]), [200, 200, 200, 429], 'a new, empty Redis: a new shared count')
})

t.test('Redis not there at the start: the service starts, limits on its own, and shares the count once Redis comes', async (t) => {
  const redis = await startRedis(t)
  await redis.kill()
  const log = captureLog()
  const config = await testConfig(t, { RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_REDIS_URL: redis.url, METRICS_PORT: '0', LOG_LEVEL: 'info' })
  const app = await buildTestApp(t, config, { logStream: log.logStream })
  const post = async () => (await app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, payload: { id: 1, name: 'Fern' } })).statusCode
  t.same([await post(), await post(), await post(), await post()], [200, 200, 200, 429], 'limited on its own')
  await sleep(1500)
  const said = log.lines.filter((line) => line.msg.startsWith('rate limits:'))
  t.equal(said.length, 1, 'and says so, once')
  t.match(said[0], { level: 40, msg: 'rate limits: Redis does not answer; each instance counts on its own until it does' })
  await redis.start()
  const began = performance.now()
  while (redis.cli('--scan', '--pattern', '*') === '') {
    if (performance.now() - began > 5000) throw new Error('nothing counted in Redis 5 s after it started')
    await post()
    await sleep(50)
  }
  t.pass(`counted in Redis ${Math.round(performance.now() - began)} ms after it started`)
})

t.test('RATE_LIMIT_REDIS_URL: read from a file like every secret, checked, and never shown', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'redis-url')
  writeFileSync(file, 'rediss://:s3cret-password@redis.internal:6380\n', { mode: 0o600 })
  const config = loadConfig({ API_TOKENS: TOKEN, RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_REDIS_URL_FILE: file })
  t.same(config.security.rateLimit?.redis, { url: 'rediss://:s3cret-password@redis.internal:6380', prefix: 'plant-store:rate-limit:', timeoutMs: 200 })
  t.throws(() => loadConfig({ API_TOKENS: TOKEN, RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:6379' }), /RATE_LIMIT_REDIS_URL is set, but RATE_LIMIT_PER_MINUTE is not/)
  try {
    loadConfig({ API_TOKENS: TOKEN, RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_REDIS_URL: 'http://:s3cret-password@redis', RATE_LIMIT_REDIS_TIMEOUT_MS: '0' })
    t.fail('refused')
  } catch (err) {
    const { message } = err as Error
    t.match(message, /RATE_LIMIT_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/)
    t.match(message, /RATE_LIMIT_REDIS_TIMEOUT_MS must be an integer from 10 to 5000/)
    t.notMatch(message, /s3cret/, 'never the password')
  }
})
