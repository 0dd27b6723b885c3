import { join } from 'node:path'
import t from 'tap'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { EVERYDAY, EXAMPLES, exampleNames, exercise } from '../helpers/readme-examples.ts'

// Every one of ReadMe's example documents, exercised as test/helpers/readme-examples.ts says; and
// npm test's part of them (readme-examples.test.ts) exercises everything the whole corpus does.

const features = new Map<string, Set<string>>()
for (const name of exampleNames()) {
  t.test(name, async (t) => { features.set(name, await exercise(t, name, await loadDocument(join(EXAMPLES, name)))) })
}

t.test('npm test\'s part exercises everything the corpus does', async (t) => {
  const covered = new Set(EVERYDAY.flatMap((name) => [...features.get(name) ?? []]))
  const missing = [...new Set([...features.values()].flatMap((f) => [...f]))].filter((feature) => !covered.has(feature)).sort()
  t.same(missing.map((feature) => `${feature} (${[...features].filter(([, f]) => f.has(feature)).map(([name]) => name).join(', ')})`), [],
    'no feature of the corpus is left to the system suite: add a document that has it to EVERYDAY in test/helpers/readme-examples.ts')
})
