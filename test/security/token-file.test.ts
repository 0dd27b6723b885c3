import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { loadConfig } from '../../src/config.ts'
import { POLL_MS } from '../../src/security/token-file.ts'
import { TokenSet } from '../../src/security/tokens.ts'
import { buildTestApp, captureLog, testConfig } from '../helpers/app.ts'
import { secretDir, updateSecretVolume } from '../helpers/secret-volume.ts'

// API_TOKENS_FILE followed as it changes: a Secret's `..data` swap, a write in place, a rename
// over it. A file that fails the checks is refused, and the tokens in force stay until it is mended.

const [FIRST, SECOND, THIRD] = ['first-rotating-token-0123456789', 'second-rotating-token-0123456789', 'third-rotating-token-0123456789']
// The bound the issue sets for a rotation to reach a replica.
const WITHIN_MS = 5000

/** An instance that follows the tokens file at `path`, with its metrics and log. */
async function following (t: Test, path: string) {
  const log = captureLog()
  // As server.ts reads it: at start, then on each change.
  const read = (): string[] => loadConfig({ API_TOKENS_FILE: path }).security.apiTokens
  const config = await testConfig(t, { METRICS_PORT: '0', LOG_LEVEL: 'info' })
  const app = await buildTestApp(t, config, { logStream: log.logStream, tokens: new TokenSet(read()), tokensFile: { path, read } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const status = async (token: string) => (await app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { id: 1, name: 'Fern' } })).statusCode
  const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(app.metricsUrl!)).text())?.[1])
  /** Resolves once `token` is answered `expected`, with how long that took; fails past WITHIN_MS. */
  const until = async (token: string, expected: number): Promise<number> => {
    const began = performance.now()
    while (await status(token) !== expected) {
      if (performance.now() - began > WITHIN_MS) throw new Error(`not ${expected} within ${WITHIN_MS} ms`)
      await sleep(20)
    }
    return performance.now() - began
  }
  let refusals = 0
  /** Resolves once one more reload was refused; fails past WITHIN_MS. */
  const refused = async (): Promise<void> => {
    refusals++
    const began = performance.now()
    while (await metric('plant_store_api_tokens_reloads_total{result="refused"}') !== refusals) {
      if (performance.now() - began > WITHIN_MS) throw new Error(`reload ${refusals} not refused within ${WITHIN_MS} ms`)
      await sleep(20)
    }
  }
  const reloads = () => log.lines.filter((line) => /^API tokens (not )?reloaded/.test(line.msg))
  return { app, log, status, metric, until, refused, reloads }
}

t.test('a Secret\'s ..data swap: the new token is accepted and the old refused within 5 s; a malformed swap keeps the tokens in force until it is mended', async (t) => {
  const dir = secretDir(t)
  updateSecretVolume(dir, { 'api-tokens': `${FIRST}\n` })
  const service = await following(t, join(dir, 'api-tokens'))
  t.equal(await service.status(FIRST), 200)

  updateSecretVolume(dir, { 'api-tokens': `# rotated\n${SECOND}\n` })
  const took = await service.until(SECOND, 200)
  t.ok(took < WITHIN_MS, `the new token is accepted ${Math.round(took)} ms after the swap`)
  t.equal(await service.status(FIRST), 401, 'the old one is refused')
  t.match(service.reloads().at(-1), { level: 30, msg: 'API tokens reloaded', reason: 'change', count: 1 })

  for (const [bad, why] of [['too-short\n', /token #1 is shorter than 16 characters/], ['# nothing\n', /API_TOKENS_FILE holds no token/]] as const) {
    updateSecretVolume(dir, { 'api-tokens': bad })
    await service.refused()
    t.equal(await service.status(SECOND), 200, `a malformed file (${why.source}) keeps the tokens in force`)
    t.equal(await service.metric('plant_store_api_tokens_file_refused'), 1, 'the metric says the file is refused')
    t.match(service.reloads().at(-1), { level: 50, msg: 'API tokens not reloaded; the ones in force stay', problem: why }, 'the log says why')
  }

  updateSecretVolume(dir, { 'api-tokens': `${THIRD}\n` })
  await service.until(THIRD, 200)
  t.equal(await service.status(SECOND), 401)
  t.equal(await service.metric('plant_store_api_tokens_file_refused'), 0, 'mended: taken')
  t.equal(await service.metric('plant_store_api_tokens_reloads_total{result="taken"}'), 2)
  t.notMatch(service.log.raw.join(''), /rotating-token/, 'never a token in the log')
})

t.test('a plain file: written in place, renamed over, opened to other users and closed again', async (t) => {
  const dir = secretDir(t)
  const path = join(dir, 'tokens')
  writeFileSync(path, `${FIRST}\n`, { mode: 0o600 })
  const service = await following(t, path)

  writeFileSync(path, `${SECOND}\n`)
  await service.until(SECOND, 200)
  t.equal(await service.status(FIRST), 401, 'written in place')

  writeFileSync(join(dir, 'tokens.new'), `${THIRD}\n`, { mode: 0o600 })
  renameSync(join(dir, 'tokens.new'), path)
  await service.until(THIRD, 200)
  t.equal(await service.status(SECOND), 401, 'renamed over')

  chmodSync(path, 0o644)
  await service.refused()
  t.equal(await service.status(THIRD), 200, 'a file other users can read is refused, the tokens in force stay')
  t.match(service.reloads().at(-1), { level: 50, problem: /is open to other users \(mode 644\)/ })
  writeFileSync(path, `${FIRST}\n`)
  await service.refused()
  t.equal(await service.status(FIRST), 401, 'still refused while it stays open')
  chmodSync(path, 0o600)
  await service.until(FIRST, 200)
  t.equal(await service.status(THIRD), 401, 'closed again: taken')
})

t.test('SIGHUP\'s reload reads the file even when it has not changed', async (t) => {
  const dir = secretDir(t)
  const path = join(dir, 'tokens')
  writeFileSync(path, `${FIRST}\n`, { mode: 0o600 })
  const service = await following(t, path)
  service.app.reloadTokens!('SIGHUP')
  t.match(service.reloads().at(-1), { msg: 'API tokens reloaded', reason: 'SIGHUP', count: 1 })
  t.equal(await service.metric('plant_store_api_tokens_reloads_total{result="taken"}'), 1)
})

t.test('the poll backstop: a file whose directory cannot be watched (not there yet) is still followed', async (t) => {
  const dir = join(secretDir(t), 'later')
  const path = join(dir, 'tokens')
  const log = captureLog()
  const config = await testConfig(t, { LOG_LEVEL: 'info' })
  const app = await buildTestApp(t, config, { logStream: log.logStream, tokens: new TokenSet([FIRST]), tokensFile: { path, read: () => loadConfig({ API_TOKENS_FILE: path }).security.apiTokens } })
  const status = async (token: string) => (await app.inject({ method: 'POST', url: '/plants', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { id: 1, name: 'Fern' } })).statusCode
  mkdirSync(dir)
  writeFileSync(path, `${SECOND}\n`, { mode: 0o600 })
  const began = performance.now()
  while (await status(SECOND) !== 200) {
    if (performance.now() - began > WITHIN_MS) throw new Error('not followed')
    await sleep(50)
  }
  t.ok(performance.now() - began <= POLL_MS + 500, `taken by the poll, within ${POLL_MS} ms`)
  t.equal(await status(FIRST), 401)
})
