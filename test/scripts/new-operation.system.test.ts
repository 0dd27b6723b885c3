import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { addHandler, addToDocument } from '../helpers/new-operation.ts'
import { addChangelogEntry, copyOfProject, run, succeeds } from '../helpers/project-copy.ts'

// It runs npm's checks and the derived tests in a copy of the project: past tap's 120 s a file
// on a slow machine (seen in CI), so it has five minutes.
t.setTimeout(5 * 60_000)

// "A new operation is the document, one handler and its test": a maintainer's read operation,
// GET /plants/{id}, added to a copy of this project as docs/changing-the-api.md says, and nothing
// else touched: with its handler written, `npm run check` passes, and so do the tests of what the
// service derives from the document, and the new one's test.

t.test('adding GET /plants/{id}: the document, one handler, its registration and its test', async (t) => {
  const copy = copyOfProject(t.testdir())
  const npm = async (...args: string[]) => await run(copy, 'npm', ...args)

  // 1. The document: the operation, its 404, and a new minor version; its types.
  // (That the compiler then names the missing handler: missing-handler.system.test.ts.)
  const version = addToDocument(copy)
  succeeds(t, 'npm run generate', await npm('run', '--silent', 'generate'))

  // 2. The handler, its registration and its test; the changelog's entry for the release.
  addHandler(copy)
  const entry = await npm('run', '--silent', 'api:changelog')
  succeeds(t, 'npm run api:changelog', entry)
  t.match(entry.output, new RegExp(`^## Plant Store ${version.replaceAll('.', '\\.')}: changes since`))
  t.match(entry.output, /GET \/plants\/\{id\}: endpoint added/)
  addChangelogEntry(copy, entry.output)

  // 3. Nothing else: npm run check and the tests pass (side by side: neither waits for the other).
  // (The document's own checks, Spectral's and the OpenAPI schema's, are npm run check's; the
  // type fixtures have a document of their own, which the new operation does not touch.)
  const derived = ['test/handlers/get-plant.test.ts', 'test/handlers/create-plant.test.ts', 'test/http/cors.test.ts', 'test/http/errors.test.ts',
    'test/openapi/methods.test.ts', 'test/openapi/deprecation.test.ts', 'test/openapi/routes.test.ts']
  const [check, tests] = await Promise.all([npm('run', 'check'), run(copy, join(copy, 'node_modules/.bin/tap'), '--disable-coverage', '--reporter=tap', ...derived)])
  succeeds(t, 'npm run check', check)
  succeeds(t, 'the derived behaviour\'s tests and the new one\'s', tests)
  t.equal(execFileSync('git', ['status', '--porcelain'], { cwd: copy, encoding: 'utf8' }).split('\n').filter(Boolean).sort().join('\n'), [
    ' M docs/api-changelog.md', ' M generated/openapi.d.ts', ' M openapi.yaml', ' M src/handlers/index.ts',
    '?? node_modules', '?? src/handlers/get-plant.ts', '?? test/handlers/get-plant.test.ts'
  ].join('\n'), 'and only the document, its types and changelog, the handler, its registration and its test changed')
})
