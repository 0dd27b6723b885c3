import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { loadDocument, type LoadedDocument } from '../../src/openapi/document.ts'
import { invalidRequests, judgeAnswer, Unbuildable, validRequest } from '../helpers/document-requests.ts'
import { splitDocument } from '../helpers/split-document.ts'

// ReadMe's example documents (@readme/oas-examples, its OpenAPI 3.0 and 3.1 folders), written to
// show what OpenAPI can say, each booted in the mock: every operation is served, or left out for a
// reason docs/your-own-api.md lists; a valid request made from the document is answered as it
// declares (a declared status and media type, a body valid against its schema); and requests with
// one fault each are refused, 400, or 401 without credentials. One of them is split over files too.

const examples = join(dirname(createRequire(import.meta.url).resolve('@readme/oas-examples/package.json')), '')
const root = fileURLToPath(new URL('../../', import.meta.url))
const config = loadConfig({ LOG_LEVEL: 'silent', VALIDATE_RESPONSES: 'true' })

/** The phrases of the refusals the docs list ("What the engine refuses"): every operation left out must say one. */
const REFUSALS = [
  'has a path that no request can have',
  'twice in its path',
  'in its path, with no path parameter to say what it is',
  'which components.securitySchemes does not define'
]

// The operations whose schemas no value can satisfy: a valid request cannot be made, by anyone.
const UNSATISFIABLE = new Set([
  'POST /direct', // a required property refers to its own schema, without end
  'PATCH /embedded-discriminator', // both branches match any object the discriminator allows
  'POST /anything/one-of-object', // oneOf two object schemas that take the same objects
  'POST /anything/one-of-object-ref',
  'POST /one-of-complex',
  'PUT /anything/strings', // a required property ("enum (with example) *required") no branch can hold, of schema-enums
  'PUT /anything/quirks/polymorphism', // allOf a string and an integer
  'PATCH /anything/quirks/polymorphism'
])

const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name)
  return statSync(path).isDirectory() ? files(path) : name.endsWith('.json') ? [path] : []
})

/** Boots the mock of `loaded` and sends it every operation's requests. */
async function exercise (t: Test, name: string, loaded: LoadedDocument): Promise<void> {
  const { app, document, routes, refused } = await buildMock(config, loaded, name)
  t.teardown(() => app.close())
  for (const { problem } of refused) t.ok(REFUSALS.some((phrase) => problem.includes(phrase)), `left out for a listed reason: ${problem}`)
  for (const route of routes) {
    const operation = `${route.method} ${route.path}`
    let valid
    try {
      valid = validRequest(document, route)
    } catch (err) {
      if (!(err instanceof Unbuildable)) throw err
      t.ok(UNSATISFIABLE.has(operation), `${operation}: no valid request can be made (${err.message})`)
      continue
    }
    const answer = await app.inject({ method: valid.method as any, url: valid.url, headers: valid.headers, payload: valid.body })
    t.equal(judgeAnswer(document, route, answer.statusCode, answer.headers['content-type'] as string | undefined, answer.body), undefined, `${operation}: answered ${answer.statusCode} as declared`)
    for (const { fault, request } of invalidRequests(document, route)) {
      const refusal = await app.inject({ method: request.method as any, url: request.url, headers: request.headers, payload: request.body })
      t.equal(refusal.statusCode, fault === 'no credentials' ? 401 : 400, `${operation}, ${fault}: refused`)
    }
  }
}

t.test('the docs list every reason an operation is left out', async (t) => {
  const docs = readFileSync(join(root, 'docs/your-own-api.md'), 'utf8')
  for (const phrase of REFUSALS) t.ok(docs.includes(phrase), `docs/your-own-api.md lists "${phrase}"`)
})

for (const file of [...files(join(examples, '3.0/json')), ...files(join(examples, '3.1/json'))]) {
  const name = relative(examples, file)
  t.test(name, async (t) => exercise(t, name, await loadDocument(file)))
}

t.test('a document split over files is served as the whole (3.0/json/petstore.json, split)', async (t) => {
  const whole = await loadDocument(join(examples, '3.0/json/petstore.json'))
  const entry = splitDocument(whole.document, t.testdir())
  const split = await loadDocument(entry)
  t.ok(split.files!.length > 5, `read from ${split.files!.length} files`)
  t.same(split.document.paths['/pet/{petId}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Pet' }, 'bundled: every $ref into the document')
  await exercise(t, 'petstore (split)', split)
})
