import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import pg from 'pg'
import { generate } from '../scripts/generate.js'
import { freshDatabaseUrl } from './postgres.js'
import { runTs } from './server-process.js'

const root = fileURLToPath(new URL('../', import.meta.url))
const run = (script: string, ...args: string[]) =>
  spawnSync(process.execPath, [...runTs.args, join(root, 'scripts', script), ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, ...runTs.env } })

t.test('the committed generated/ matches openapi.yaml', async (t) => {
  const res = run('generate.ts', '--check')
  t.equal(res.status, 0, res.stderr)
  t.match(res.stdout, /up to date/)
})

t.test('response headers are typed as the document declares them: sent always, or only sometimes', async (t) => {
  const types = readFileSync(join(root, 'generated/openapi.d.ts'), 'utf8')
  t.match(types, /"Cache-Control": string;/, 'a required header is required')
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

t.test('npm run migrate applies the migrations without starting the server', async (t) => {
  const migrate = (databaseUrl: string) => spawnSync(process.execPath, [...runTs.args, join(root, 'src/migrate.ts')], {
    cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, ...runTs.env }
  })
  const url = await freshDatabaseUrl()
  const first = migrate(url)
  t.equal(first.status, 0, first.stderr)
  t.match(first.stdout, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+ is migrated/, 'the password is masked')
  t.equal(migrate(url).status, 0, 'running it again is a no-op')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.same((await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows, [{ version: 1 }])
  await client.end()

  const file = join(t.testdir(), 'plants.db')
  t.equal(migrate(`sqlite:${file}`).status, 0)
  const bad = migrate('postgres://nobody@127.0.0.1:1/none')
  t.equal(bad.status, 1)
  t.match(bad.stderr, /migration failed/)
})
