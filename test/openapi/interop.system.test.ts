import SwaggerParser from '@apidevtools/swagger-parser'
import { validate as readmeValidate } from '@readme/openapi-parser'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'

// The document as other tools read it: the validators most consumer tools are built on accept
// it, and the API linter that `npm run check` runs passes it and fails a real violation.

const root = fileURLToPath(new URL('../../', import.meta.url))
const documentPath = join(root, 'openapi.yaml')
const documentText = readFileSync(documentPath, 'utf8')

t.test('@apidevtools/swagger-parser accepts the document', async (t) => {
  const api = await SwaggerParser.validate(parse(documentText))
  t.equal(api.info.title, 'Plant Store')
})

t.test('...which is why no server variable has a description (its bundled 2021-04-15 schema refuses one)', async (t) => {
  const withDescription = parse(documentText)
  withDescription.servers[0].variables.base_url.description = 'Scheme, host and port.'
  await t.rejects(SwaggerParser.validate(withDescription), /base_url must NOT have unevaluated properties/)
})

t.test('@readme/openapi-parser accepts the document', async (t) => {
  const result = await readmeValidate(parse(documentText))
  t.ok(result.valid, 'valid', { errors: (result as { errors?: unknown }).errors })
})

const spectral = (...paths: string[]) => spawnSync(join(root, 'node_modules/.bin/spectral'), ['lint', ...paths, '--ruleset', join(root, 'scripts/spectral.yaml'), '--fail-severity', 'warn'], { encoding: 'utf8' })

t.test('Spectral (spectral:oas and OWASP\'s rules) finds nothing in the document, and fails one with a real violation', async (t) => {
  // The document and two copies with one violation each, linted in one run (Spectral's start is
  // most of its cost): it reports by file, and the document has no section.
  const dir = t.testdir()
  const withoutDescription = parse(documentText)
  delete withoutDescription.paths['/plants'].post.description
  writeFileSync(join(dir, 'no-description.json'), JSON.stringify(withoutDescription))
  // OWASP API4:2023: a string with no bound, in an answer's header this time.
  const unbounded = parse(documentText)
  delete unbounded.components.headers.XRequestId.schema.maxLength
  writeFileSync(join(dir, 'unbounded.json'), JSON.stringify(unbounded))
  const linted = spectral(documentPath, join(dir, 'no-description.json'), join(dir, 'unbounded.json'))
  t.equal(linted.status, 1, 'a warning fails the lint')
  const sections = linted.stdout.split(/^(?=\S+\.(?:json|yaml)$)/m)
  t.notOk(sections.some((section) => section.startsWith(documentPath)), 'nothing found in openapi.yaml', { output: linted.stdout.slice(0, 2000) })
  t.match(sections.find((section) => section.includes('no-description.json')), /operation-description/, 'a spectral:oas finding')
  t.match(sections.find((section) => section.includes('unbounded.json')), /owasp:api4:2023-string-limit.*components\.headers\.XRequestId\.schema/, 'an OWASP finding')
  t.equal(sections.filter((section) => /\.(json|yaml)\n/.test(section)).length, 2, 'and nothing else', { output: linted.stdout.slice(0, 2000) })
})
