import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { EVERYDAY, EXAMPLES, exercise, REFUSALS } from '../helpers/readme-examples.ts'
import { splitDocument } from '../helpers/split-document.ts'

// The part of ReadMe's example documents that exercises everything the whole corpus does (every
// parameter style, body media type, kind of security, discriminator…; the system suite runs the
// whole corpus and holds the part to that), exercised as test/helpers/readme-examples.ts says; and
// one of them split over files.

const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('the docs list every reason an operation is left out', async (t) => {
  const docs = readFileSync(join(root, 'docs/your-own-api.md'), 'utf8')
  for (const phrase of REFUSALS) t.ok(docs.includes(phrase), `docs/your-own-api.md lists "${phrase}"`)
})

for (const name of EVERYDAY) t.test(name, async (t) => { await exercise(t, name, await loadDocument(join(EXAMPLES, name))) })

t.test('a document split over files is served as the whole (3.0/json/petstore.json, split)', async (t) => {
  const whole = await loadDocument(join(EXAMPLES, '3.0/json/petstore.json'))
  const entry = splitDocument(whole.document, t.testdir())
  const split = await loadDocument(entry)
  t.ok(split.files!.length > 5, `read from ${split.files!.length} files`)
  t.same(split.document.paths['/pet/{petId}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Pet' }, 'bundled: every $ref into the document')
  await exercise(t, 'petstore (split)', split)
})
