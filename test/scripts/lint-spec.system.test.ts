// npm run lint:spec reads the document as the service does: a split one as its bundle, so that
// scripts/spectral.yaml's decisions, made by place, give the same verdict wherever a schema's file
// lives, and a finding is named in the file a person edits, at its line. (Spectral starts in
// seconds: hence the system suite.)
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dump, load } from 'js-yaml'
import t from 'tap'
import { splitDocument } from '../helpers/split-document.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))
const plantStore = load(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as Record<string, any>

t.setTimeout(120_000)

function lint (file: string): { status: number | null, output: string } {
  const run = spawnSync(process.execPath, [join(root, 'scripts/lint-spec.ts'), file], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, output: run.stdout + run.stderr }
}

/** The document with components/schemas moved to components/schemas.yaml, each schema referred to there. */
function withSchemasFile (document: Record<string, any>, dir: string): string {
  const schemas = JSON.parse(JSON.stringify(document.components.schemas).replaceAll('"#/components/schemas/', '"#/'))
  mkdirSync(join(dir, 'components'))
  writeFileSync(join(dir, 'components/schemas.yaml'), dump(schemas))
  const entry = { ...document, components: { ...document.components, schemas: Object.fromEntries(Object.keys(schemas).map((name) => [name, { $ref: `./components/schemas.yaml#/${name}` }])) } }
  writeFileSync(join(dir, 'openapi.yaml'), dump(entry))
  return join(dir, 'openapi.yaml')
}

// The single file's verdict, and the ruleset's findings in it: interop.system.test.ts.
t.test('a split document gets the verdict the single file gets', async (t) => {
  for (const [how, split] of [['components/schemas.yaml', withSchemasFile], ['a file per schema and per path', splitDocument]] as const) {
    const { status, output } = lint(split(plantStore, t.testdir()))
    t.equal(status, 0, `split into ${how}: it passes too, the ruleset's decisions kept`)
    t.match(output, /no problems found/)
  }
})

t.test('a finding is named in the file where it is written, at its line', async (t) => {
  const unbounded = structuredClone(plantStore)
  unbounded.components.schemas.Plant.properties = { colour: { type: 'string' }, ...unbounded.components.schemas.Plant.properties }
  const dir = t.testdir()
  const { status, output } = lint(withSchemasFile(unbounded, dir))
  t.equal(status, 1, 'an unbounded string fails the lint')
  const schemas = readFileSync(join(dir, 'components/schemas.yaml'), 'utf8').split('\n')
  const line = schemas.findIndex((text) => text.trim() === 'colour:') + 1
  t.match(output, new RegExp(`components/schemas\\.yaml:${line}:\\d+ +error +owasp:api4:2023-string-limit .*#/components/schemas/Plant/properties/colour`), `named at components/schemas.yaml:${line}`)
  t.notMatch(output, /lint-spec-/, 'never the bundle\'s scratch file')
})
