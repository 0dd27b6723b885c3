import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { addChangelogEntry, copyOfProject, run, succeeds } from '../helpers/project-copy.ts'

// It runs npm's checks and the derived tests in a copy of the project: past tap's 120 s a file
// on a slow machine (seen in CI), so it has five minutes.
t.setTimeout(5 * 60_000)

// "A new operation is the document, one handler and its test": a maintainer's read operation,
// GET /plants/{id}, added to a copy of this project as docs/changing-the-api.md says, and nothing
// else touched. The compiler names the missing handler; with it written, `npm run check` passes,
// and so do the tests of what the service derives from the document, and the new one's test.

const PATH_ITEM = `  /plants/{id}:
    description: |
      A method this path does not declare answers 405 with an Allow header
      naming the declared ones, and an Error body.
    get:
      operationId: getPlant
      tags:
        - plants
      security:
        - bearerAuth:
            - plants:read
      summary: Read a stored plant
      description: Answers the plant stored under this id, once it is durable.
      parameters:
        - name: id
          in: path
          required: true
          description: The plant's id.
          schema:
            $ref: '#/components/schemas/PlantId'
      responses:
        '200':
          description: The stored plant, without its id.
          headers:
            Cache-Control:
              $ref: '#/components/headers/CacheControl'
            X-Request-Id:
              $ref: '#/components/headers/XRequestId'
            RateLimit-Limit:
              $ref: '#/components/headers/RateLimitLimit'
            RateLimit-Remaining:
              $ref: '#/components/headers/RateLimitRemaining'
            RateLimit-Reset:
              $ref: '#/components/headers/RateLimitReset'
            Access-Control-Allow-Origin:
              $ref: '#/components/headers/AccessControlAllowOrigin'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Plant'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '408':
          $ref: '#/components/responses/RequestTimeout'
        '429':
          $ref: '#/components/responses/TooManyRequests'
        '431':
          $ref: '#/components/responses/HeadersTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
`
const NOT_FOUND = `    NotFound:
      description: No plant is stored under this id.
      headers:
        Cache-Control:
          $ref: '#/components/headers/CacheControl'
        X-Request-Id:
          $ref: '#/components/headers/XRequestId'
        RateLimit-Limit:
          $ref: '#/components/headers/RateLimitLimit'
        RateLimit-Remaining:
          $ref: '#/components/headers/RateLimitRemaining'
        RateLimit-Reset:
          $ref: '#/components/headers/RateLimitReset'
        Access-Control-Allow-Origin:
          $ref: '#/components/headers/AccessControlAllowOrigin'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
`
const HANDLER = `import type { Handler } from '../openapi/routes/handler-types.ts'
import type { PlantStore } from '../store/store.ts'

export function getPlant (store: PlantStore): Handler<'getPlant'> {
  return async ({ params }) => {
    const plant = await store.get(BigInt(params.id))
    if (plant === undefined) return { status: 404, body: { error: 404, message: \`No plant \${params.id}\` } }
    return { status: 200, body: plant }
  }
}
`
const HANDLER_TEST = `import t from 'tap'
import { AUTH, assertError, buildTestApp, post } from '../helpers/app.ts'

t.test('a stored plant is read back; another id is a 404; a token is needed', async (t) => {
  const app = await buildTestApp(t)
  t.equal((await post(app, '{"id":9007199254740993,"name":"Fern","tag":"indoor"}')).statusCode, 200)
  const found = await app.inject({ url: '/plants/9007199254740993', headers: AUTH })
  t.equal(found.statusCode, 200)
  t.same(found.json(), { name: 'Fern', tag: 'indoor' })
  assertError(t, await app.inject({ url: '/plants/9007199254740992', headers: AUTH }), 404, /No plant 9007199254740992/)
  assertError(t, await app.inject({ url: '/plants/fern', headers: AUTH }), 400, /params\\/id/)
  assertError(t, await app.inject({ url: '/plants/1' }), 401)
})
`

t.test('adding GET /plants/{id}: the document, one handler, its registration and its test', async (t) => {
  const copy = copyOfProject(t.testdir())
  const file = (path: string) => join(copy, path)
  const npm = async (...args: string[]) => await run(copy, 'npm', ...args)

  // 1. The document: the operation, its 404, and a new minor version.
  let document = readFileSync(file('openapi.yaml'), 'utf8')
  const [, major, minor] = /^ {2}version: (\d+)\.(\d+)\.\d+$/m.exec(document)!
  const version = `${major}.${Number(minor) + 1}.0`
  document = document.replace(/^ {2}version: .*$/m, `  version: ${version}`)
    .replace(/^components:$/m, `${PATH_ITEM}components:`)
    .replace(/^ {4}RequestTimeout:$/m, `${NOT_FOUND}    RequestTimeout:`)
  writeFileSync(file('openapi.yaml'), document)

  // 2. The types, and the compiler names what is missing.
  const generated = await npm('run', '--silent', 'generate')
  succeeds(t, 'npm run generate', generated)
  const missing = await npm('run', '--silent', 'typecheck')
  t.not(missing.status, 0, 'the compiler fails')
  t.match(missing.output, /src\/handlers\/index\.ts.*Property 'getPlant' is missing/s, 'naming the missing handler')

  // 3. The handler, its registration and its test; the changelog's entry for the release.
  writeFileSync(file('src/handlers/get-plant.ts'), HANDLER)
  const index = readFileSync(file('src/handlers/index.ts'), 'utf8')
  writeFileSync(file('src/handlers/index.ts'), index
    .replace("import { createPlant } from './create-plant.ts'", "import { createPlant } from './create-plant.ts'\nimport { getPlant } from './get-plant.ts'")
    .replace('createPlant: createPlant(store)', 'createPlant: createPlant(store),\n    getPlant: getPlant(store)'))
  writeFileSync(file('test/handlers/get-plant.test.ts'), HANDLER_TEST)
  const entry = await npm('run', '--silent', 'api:changelog')
  succeeds(t, 'npm run api:changelog', entry)
  t.match(entry.output, new RegExp(`^## Plant Store ${version.replaceAll('.', '\\.')}: changes since`))
  t.match(entry.output, /GET \/plants\/\{id\}: endpoint added/)
  addChangelogEntry(copy, entry.output)

  // 4. Nothing else: npm run check and the tests pass (side by side: neither waits for the other).
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
