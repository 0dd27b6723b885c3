import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { postPlant, startServer as start } from './helpers/server-process.ts'

t.test('npm start works out of the box: a token made once, kept beside the database, printed with the docs URL', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'data', 'api-token')
  const run = async () => {
    const server = start(t, {}, dir)
    const { url, token } = await server.listening
    const res = await postPlant(url, token ?? '', '{"id":1,"name":"Fern"}')
    t.equal(res.status, 200, 'the printed token is accepted')
    server.child.kill('SIGTERM')
    t.equal(await server.exited, 0)
    const { stdout } = server.output()
    t.match(stdout, `\nPlant Store is listening on ${url}\n`, 'named by the document\'s title')
    t.match(stdout, `API docs: ${url}/docs`)
    t.equal(stdout.split(token!).length, 2, 'the token appears exactly once in the output')
    return { token: token!, stdout }
  }

  const first = await run()
  t.ok(first.token.length >= 32, 'a strong token is made')
  t.match(first.stdout, 'accepting the new token kept in data/api-token:')
  t.equal(statSync(file).mode & 0o777, 0o600, 'the file is readable by its owner only')
  t.equal(readFileSync(file, 'utf8'), `${first.token}\n`)

  const second = await run()
  t.equal(second.token, first.token, 'a restart reuses the token')
  t.match(second.stdout, 'accepting the reused token kept in data/api-token:')

  rmSync(file)
  const third = await run()
  t.not(third.token, first.token, 'deleting the file rotates the token')
  t.match(third.stdout, 'accepting the new token')
})

t.test('a kept token file that others can read, or that holds no usable token, is refused, not replaced', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'api-token')
  const env = { DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` }
  const token = 'kept-token-0123456789abcdefghij'
  for (const [content, mode, reason] of [
    [token, 0o644, /^Plant Store cannot start: \S+api-token is open to other users \(mode 644\); run chmod 600 on it, or delete it to get a new token\n$/],
    ['x1y2', 0o600, /^Plant Store cannot start: \S+api-token holds no usable token \(it is shorter than 16 characters\); delete it to get a new one\n$/],
    ['not a token at all, with spaces', 0o600, /holds no usable token \(it has characters other than/]
  ] as const) {
    writeFileSync(file, `${content}\n`)
    chmodSync(file, mode)
    const server = start(t, env, dir)
    t.equal(await server.exited, 1, `mode ${mode.toString(8)}: refused`)
    t.match(server.output().stderr, reason)
    t.notMatch(server.output().stderr, content, 'the file\'s content is not printed')
    t.equal(readFileSync(file, 'utf8'), `${content}\n`, 'the file is left as it was')
  }
})

t.test('an API_TOKENS_FILE that other users can read stops the start, with the kept token\'s message', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'tokens')
  writeFileSync(file, 'a-token-in-an-open-file-0123456789\n')
  chmodSync(file, 0o644)
  const server = start(t, { API_TOKENS_FILE: file }, dir)
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, /API_TOKENS_FILE cannot be read: \S+tokens is open to other users \(mode 644\); run chmod 600 on it\n/)
  t.notMatch(server.output().stderr, 'a-token-in-an-open-file', 'the file\'s content is not printed')
})

t.test('with tokens configured, nothing is made or written', async (t) => {
  const dir = t.testdir()
  const server = start(t, { API_TOKENS: 'configured-token-0123456789' }, dir)
  const { token } = await server.listening
  t.equal(token, undefined, 'no token printed')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.notOk(existsSync(join(dir, 'data', 'api-token')), 'no token file')
})

t.test('SIGTERM drains an in-flight request, then refuses new ones and exits 0', async (t) => {
  const token = 'graceful-token-0123456789'
  const server = start(t, { API_TOKENS: token })
  const { url } = await server.listening
  const { hostname, port } = new URL(url)
  const body = '{"id":2,"name":"Slow fern"}'
  // A request whose body is still arriving when the signal comes.
  const answered = new Promise<{ status?: number, body: string }>((resolve, reject) => {
    const req = request({ hostname, port, path: '/plants', method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode, body: text }))
    })
    req.on('error', reject)
    req.write(body.slice(0, 10))
    setTimeout(() => {
      server.child.kill('SIGTERM')
      setTimeout(() => req.end(body.slice(10)), 300)
    }, 200)
  })
  const res = await answered
  t.equal(res.status, 200, 'the in-flight request is answered')
  t.same(JSON.parse(res.body), { name: 'Slow fern' })
  t.equal(await server.exited, 0, 'exits 0')
  await t.rejects(fetch(`${url}/healthz`), 'new connections are refused')
})

t.test('a bad config stops the start with one clear message naming every problem, typos included', async (t) => {
  const server = start(t, { PORT: 'eighty', API_TOKENS: 'tiny-secret', LOG_LEVEL: 'loud', DATABSE_URL: 'sqlite:/tmp/other.db' })
  t.equal(await server.exited, 1)
  const { stderr } = server.output()
  t.match(stderr, /^Invalid configuration:\n/)
  t.match(stderr, /\n {2}- PORT must be an integer from 0 to 65535, got "eighty"\n/)
  t.match(stderr, /\n {2}- LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"\n/)
  t.match(stderr, /\n {2}- API_TOKENS: token #1 is shorter than 16 characters\n/)
  t.match(stderr, /\n {2}- DATABSE_URL is set, but no such variable is read: did you mean DATABASE_URL\?\n/)
  t.notMatch(stderr, /tiny-secret/, 'never a token')
  t.notMatch(stderr, /at .+\.ts:\d+/, 'no stack trace')
})

t.test('SIGHUP re-reads API_TOKENS_FILE: tokens rotate without a restart', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'tokens')
  const [oldToken, newToken] = ['old-rotating-token-0123456789', 'new-rotating-token-0123456789']
  writeFileSync(file, `${oldToken}\n`, { mode: 0o600 })
  const server = start(t, { API_TOKENS_FILE: file, LOG_LEVEL: 'info' }, dir)
  const { url } = await server.listening
  const status = async (token: string) => (await postPlant(url, token, '{"id":1,"name":"Fern"}')).status
  t.equal(await status(oldToken), 200)
  t.equal(await status(newToken), 401)

  writeFileSync(file, `# rotated\n${newToken}\n`)
  server.child.kill('SIGHUP')
  await sleep(300)
  t.equal(await status(newToken), 200, 'the new token is accepted')
  t.equal(await status(oldToken), 401, 'the old one no longer is')

  writeFileSync(file, 'too-short\n')
  server.child.kill('SIGHUP')
  await sleep(300)
  t.equal(await status(newToken), 200, 'a bad file leaves the tokens in force')
  t.match(server.output().stdout, /API tokens not reloaded/)

  writeFileSync(file, `${oldToken}\n`)
  chmodSync(file, 0o644)
  server.child.kill('SIGHUP')
  await sleep(300)
  t.equal(await status(newToken), 200, 'so does a file that other users can read')
  t.equal(await status(oldToken), 401)
  t.match(server.output().stdout, /"problem":"[^"]*is open to other users \(mode 644\); run chmod 600 on it"[^\n]*API tokens not reloaded/)
  t.notMatch(server.output().stdout + server.output().stderr, newToken, 'no token in the logs')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('a database it cannot reach stops the start with a one-line reason', async (t) => {
  const server = start(t, { API_TOKENS: 'unreachable-db-token-0123', DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, /^Plant Store cannot start: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
})
