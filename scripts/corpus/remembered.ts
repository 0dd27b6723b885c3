// npm run corpus:remembered: the stateful mock on real descriptions nobody here wrote (the same
// seeded sample of the APIs.guru directory as npm run corpus, and GitHub's). For each document:
// the resources the mock infers; for each resource that can be created and read, a create then a
// read (test/helpers/read-after-write.ts), and whether the read answers what was written. In
// process (app.inject): no ports.
//   CORPUS_SAMPLE=200  CORPUS_SEED=1  CORPUS_ONLY=<substring>  CORPUS_VERBOSE=1 (each pair's outcome)
import { relative, join } from 'node:path'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { inferResources } from '../../src/openapi/routes/resources.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { createThenRead } from '../../test/helpers/read-after-write.ts'
import { directory, sample } from './documents.ts'
import { CACHE, GITHUB, install } from './mocks.ts'

const SAMPLE = Number(process.env.CORPUS_SAMPLE ?? 200)
const SEED = Number(process.env.CORPUS_SEED ?? 1)
const config = loadConfig({ LOG_LEVEL: 'silent' })

async function main (): Promise<void> {
  install()
  const files = [...sample(directory(), SAMPLE, SEED), GITHUB].filter((file) => process.env.CORPUS_ONLY === undefined || file.includes(process.env.CORPUS_ONLY))
  const outcomes: Record<string, number> = {}
  let documents = 0
  let inferred = 0
  let resources = 0
  for (const [n, file] of files.entries()) {
    const name = relative(join(CACHE, 'node_modules'), file)
    let built
    try {
      built = await buildMock(config, await loadDocument(file), name)
    } catch (err) {
      console.log(`${n + 1}/${files.length} ${name}: not mocked: ${(err as Error).message.slice(0, 120)}`)
      continue
    }
    documents++
    const { app, document, routes } = built
    try {
      const inference = inferResources(document, routes)
      const readable = inference.resources.filter((r) => r.operations.create !== undefined && r.operations.read !== undefined)
      if (inference.resources.length > 0) inferred++
      resources += inference.resources.length
      const validators = createValidators(document, name)
      const own: string[] = []
      for (const resource of readable) {
        const { outcome, detail } = await createThenRead(document, validators, app.inject.bind(app), resource)
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
        own.push(outcome)
        if (process.env.CORPUS_VERBOSE === '1' && outcome !== 'read back') console.log(`    ${resource.item}: ${outcome}${detail === undefined ? '' : ` (${detail})`}`)
      }
      console.log(`${n + 1}/${files.length} ${name}: ${inference.resources.length} resource(s), ${readable.length} created and read: ${own.filter((o) => o === 'read back').length} read back`)
    } finally {
      await app.close()
    }
  }
  const pairs = Object.values(outcomes).reduce((a, b) => a + b, 0)
  console.log(`\n${documents} documents mocked; ${inferred} with resources inferred (${resources} resources); ${pairs} created then read:`)
  for (const [outcome, count] of Object.entries(outcomes).sort((a, b) => b[1] - a[1])) console.log(`  ${outcome}: ${count} (${(100 * count / Math.max(1, pairs)).toFixed(1)}%)`)
}

await main()
