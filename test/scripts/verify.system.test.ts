import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { routeList } from '../../src/openapi/routes/routes.ts'
import { builtBundle } from '../helpers/bundle.ts'
import { logExcerpt } from '../helpers/log-file.ts'
import { startServer } from '../helpers/server-process.ts'

// The Plant Store verifies itself: `npm run verify` on openapi.yaml against the service as
// `npm start` runs it finds nothing, for every operation the document has, with the token from
// the environment, as a CI step would give it.

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'verify-test-token-0123456789abcdef'
// The verifier is bounded by its own time limit; this bounds a hang of npm itself.
const RUN_TIMEOUT_MS = 180_000

t.test('npm run verify -- openapi.yaml <the service> finds nothing', async (t) => {
  const dir = t.testdir()
  const server = startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` }, dir, [], await builtBundle())
  const { url } = await server.listening
  const [report, junit] = [join(dir, 'report.json'), join(dir, 'junit.xml')]
  const child = spawn('npm', ['run', '--silent', 'verify', '--', 'openapi.yaml', url, '--report', report, '--junit', junit, '--time-limit', '120'], {
    cwd: root, env: { PATH: process.env.PATH, VERIFY_BEARER: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'], timeout: RUN_TIMEOUT_MS
  })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  t.equal(status, 0, `exit 0: ${logExcerpt('verify', output)}`)
  t.match(output, /operations? verified with \d+ requests in [\d.]+ s: no violation\./)

  const { routes } = routeList((await loadDocument()).document)
  const written = JSON.parse(readFileSync(report, 'utf8'))
  t.same(written.operations.map((o: any) => `${o.method} ${o.path} ${o.operationId}`), routes.map((r) => `${r.method} ${r.path} ${r.operationId}`), 'every operation of the document')
  for (const operation of written.operations) {
    t.same(operation.violations, [], `${operation.method} ${operation.path}: nothing found`)
    t.same(operation.notes, [], 'verified in full')
    t.ok(operation.requests >= 5, `${operation.requests} requests`)
  }
  t.match(readFileSync(junit, 'utf8'), 'failures="0"')
})
