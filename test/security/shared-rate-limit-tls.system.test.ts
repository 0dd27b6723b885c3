import t from 'tap'
import { makeCertificates } from '../helpers/certificates.ts'
import { hasRedis, startRedis } from '../helpers/redis.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// RATE_LIMIT_REDIS_URL=rediss://: the counts go to Redis over TLS, its certificate checked against
// the CAs Node trusts (a private CA through NODE_EXTRA_CA_CERTS, as operators add one).

const TOKEN = 'tls-limits-token-0123456789'
const needs = { skip: hasRedis() ? false : 'needs Debian\'s redis-server (npm test installs it)' }

t.test('counted in Redis over TLS; a certificate it cannot verify is never trusted, and the service counts on its own', needs, async (t) => {
  const ours = makeCertificates('127.0.0.1')
  const redis = await startRedis(t, { tls: ours })
  t.match(redis.url, /^rediss:\/\//)
  const env = { API_TOKENS: TOKEN, RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_REDIS_URL: redis.url, LOG_LEVEL: 'info' }

  const cwd = t.testdir()
  const trusting = startServer(t, { ...env, DATABASE_URL: 'sqlite:./trusting.db', NODE_EXTRA_CA_CERTS: ours.ca }, cwd)
  const { url } = await trusting.listening
  // Until its first ping is answered, an instance counts on its own: wait for Redis to be asked.
  for (const deadline = Date.now() + 5000; !trusting.output().stdout.includes('rate limits: counted in Redis');) {
    if (Date.now() > deadline) throw new Error(`not counting in Redis: ${trusting.output().stdout}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  const statuses = [(await postPlant(url, TOKEN, '{"id":1,"name":"Fern"}')).status, (await postPlant(url, TOKEN, '{"id":2,"name":"Fern"}')).status, (await postPlant(url, TOKEN, '{"id":3,"name":"Fern"}')).status]
  t.same(statuses, [200, 200, 429], 'limited')
  t.match(redis.cli('--scan', '--pattern', '*'), /^plant-store:rate-limit:token:/, 'counted in Redis, over TLS')

  const wary = startServer(t, { ...env, DATABASE_URL: 'sqlite:./wary.db', API_TOKENS: 'tls-limits-other-0123456789' }, cwd)
  const other = await wary.listening
  for (const deadline = Date.now() + 5000; !wary.output().stdout.includes('rate limits: Redis does not answer');) {
    if (Date.now() > deadline) throw new Error(`no word of Redis: ${wary.output().stdout}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  t.match(wary.output().stdout, /"connection":"[^"]*(self[- ]signed|unable to verify|certificate)/i, 'without the CA, the certificate is refused, and the log says why')
  t.same([(await postPlant(other.url, 'tls-limits-other-0123456789', '{"id":4,"name":"Fern"}')).status, (await postPlant(other.url, 'tls-limits-other-0123456789', '{"id":5,"name":"Fern"}')).status, (await postPlant(other.url, 'tls-limits-other-0123456789', '{"id":6,"name":"Fern"}')).status], [200, 200, 429], 'and limits on its own')
  t.notMatch(trusting.output().stdout + wary.output().stdout, /redis-test-password/, 'never the password in a log')
})
