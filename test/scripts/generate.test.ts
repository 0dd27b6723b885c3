import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { generate } from '../../scripts/generate.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'scripts', script), ...args], { cwd: root, encoding: 'utf8', env: process.env })

t.test('the committed types match their documents: generated/ and the type fixtures\'', async (t) => {
  for (const [document, types] of [['openapi.yaml', 'generated/openapi.d.ts'], ['test/openapi/type-fixtures/openapi.yaml', 'test/openapi/type-fixtures/openapi.d.ts']]) {
    t.equal(await generate(pathToFileURL(join(root, document))), readFileSync(join(root, types), 'utf8'), `${types} is up to date`)
  }
})

t.test('response headers are typed as the document declares them: sent always, or only sometimes', async (t) => {
  const types = readFileSync(join(root, 'generated/openapi.d.ts'), 'utf8')
  t.match(types, /"Cache-Control": "no-store";/, 'a required header is required')
  t.match(types, /"RateLimit-Limit"\?: number;/, 'an optional one (sent only with RATE_LIMIT_PER_MINUTE) is optional, though given by $ref')
  t.notMatch(types, /"RateLimit-Limit": /)
})

t.test('a spec change changes the generated types', async (t) => {
  const copy = join(t.testdir(), 'openapi.yaml')
  writeFileSync(copy, readFileSync(join(root, 'openapi.yaml'), 'utf8').replace(
    '        tag:\n          type: string\n',
    '        tag:\n          type: string\n        height:\n          type: integer\n          format: int64\n'
  ))
  const fresh = await generate(pathToFileURL(copy))
  t.not(fresh, readFileSync(join(root, 'generated/openapi.d.ts'), 'utf8'))
  t.match(fresh, /height\?: number \| bigint;/, 'int64 fields are number | bigint')
  t.match(fresh, /^\/\*\*\n \* DO NOT EDIT/, 'with the do-not-edit header')
})

t.test('the spec validator accepts ours and rejects a broken document', async (t) => {
  const ok = run('validate-spec.ts')
  t.equal(ok.status, 0, ok.stderr)
  t.match(ok.stdout, /valid OpenAPI 3.1 document/)
  const broken = join(t.testdir(), 'broken.yaml')
  writeFileSync(broken, readFileSync(join(root, 'openapi.yaml'), 'utf8').replace('operationId: createPlant', 'operationId: [createPlant]'))
  const bad = run('validate-spec.ts', broken)
  t.equal(bad.status, 1)
  t.match(bad.stderr, /is not a valid OpenAPI 3.1 document/)
})
