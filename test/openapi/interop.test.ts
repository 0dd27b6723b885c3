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

const spectral = (path: string) => spawnSync(join(root, 'node_modules/.bin/spectral'), ['lint', path, '--ruleset', join(root, 'scripts/spectral.yaml'), '--fail-severity', 'warn'], { encoding: 'utf8' })

t.test('Spectral (spectral:oas and OWASP\'s rules) finds nothing, and fails a document with a real violation', async (t) => {
  const clean = spectral(documentPath)
  t.equal(clean.status, 0, clean.stdout + clean.stderr)
  t.match(clean.stdout, /No results with a severity of 'warn' or higher found/)

  const broken = join(t.testdir(), 'openapi.yaml')
  const withoutDescription = parse(documentText)
  delete withoutDescription.paths['/plants'].post.description
  writeFileSync(broken, JSON.stringify(withoutDescription))
  const failed = spectral(broken)
  t.equal(failed.status, 1, 'a warning fails the lint')
  t.match(failed.stdout, /operation-description/)

  // OWASP API4:2023: a string with no bound, in an answer's header this time.
  const unbounded = parse(documentText)
  delete unbounded.components.headers.XRequestId.schema.maxLength
  writeFileSync(broken, JSON.stringify(unbounded))
  const owasp = spectral(broken)
  t.equal(owasp.status, 1, 'an OWASP finding fails the lint')
  t.match(owasp.stdout, /owasp:api4:2023-string-limit.*components\.headers\.XRequestId\.schema/)
})
