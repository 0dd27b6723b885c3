import { writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { postPlant, startServer as start } from './server-process.js'

t.test('npm start works out of the box: a generated token, printed once with the docs URL', async (t) => {
  const server = start(t, {})
  const { url, token } = await server.listening
  t.ok(token !== undefined && token.length >= 32, 'a strong token is printed')
  t.match(server.output().stdout, `API docs: ${url}/docs`)
  const res = await postPlant(url, token ?? '', '{"id":1,"name":"Fern"}')
  t.equal(res.status, 200)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  t.equal(server.output().stdout.split(token!).length, 2, 'the token appears exactly once in the output')
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

t.test('a bad config stops the start with a clear message', async (t) => {
  const server = start(t, { PORT: 'eighty', API_TOKENS: 'short' })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, /Invalid configuration:\n {2}- PORT must be an integer/)
  t.match(server.output().stderr, /token #1 is shorter than 16 characters/)
  t.notMatch(server.output().stderr, /at .+\.ts:\d+/, 'no stack trace')
})

t.test('SIGHUP re-reads API_TOKENS_FILE: tokens rotate without a restart', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'tokens')
  const [oldToken, newToken] = ['old-rotating-token-0123456789', 'new-rotating-token-0123456789']
  writeFileSync(file, `${oldToken}\n`)
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
  t.notMatch(server.output().stdout + server.output().stderr, newToken, 'no token in the logs')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
})

t.test('a database it cannot reach stops the start with a one-line reason', async (t) => {
  const server = start(t, { API_TOKENS: 'unreachable-db-token-0123', DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, /^Plant Store cannot start: connect ECONNREFUSED 127\.0\.0\.1:1\n$/)
})
