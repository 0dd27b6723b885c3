import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

// A maintainer's read operation, GET /plants/{id}, as docs/changing-the-api.md adds it: its path
// item and 404 answer in the document, its handler, its registration and its test. For the
// system tests that add it to a copy of this project: test/scripts/missing-handler.system.test.ts
// and new-operation.system.test.ts.

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

/** Adds the operation and its 404 to the copy's openapi.yaml, with a new minor version, which it returns. */
export function addToDocument (copy: string): string {
  const file = join(copy, 'openapi.yaml')
  let document = readFileSync(file, 'utf8')
  const [, major, minor] = /^ {2}version: (\d+)\.(\d+)\.\d+$/m.exec(document)!
  const version = `${major}.${Number(minor) + 1}.0`
  document = document.replace(/^ {2}version: .*$/m, `  version: ${version}`)
    .replace(/^components:$/m, `${PATH_ITEM}components:`)
    .replace(/^ {4}RequestTimeout:$/m, `${NOT_FOUND}    RequestTimeout:`)
  writeFileSync(file, document)
  return version
}

/** Writes the handler and its test into the copy, and registers the handler. */
export function addHandler (copy: string): void {
  writeFileSync(join(copy, 'src/handlers/get-plant.ts'), HANDLER)
  const index = join(copy, 'src/handlers/index.ts')
  writeFileSync(index, readFileSync(index, 'utf8')
    .replace("import { createPlant } from './create-plant.ts'", "import { createPlant } from './create-plant.ts'\nimport { getPlant } from './get-plant.ts'")
    .replace('createPlant: createPlant(store)', 'createPlant: createPlant(store),\n    getPlant: getPlant(store)'))
  writeFileSync(join(copy, 'test/handlers/get-plant.test.ts'), HANDLER_TEST)
}
