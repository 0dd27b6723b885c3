// Validates openapi.yaml (or the file given) against the OpenAPI schema of its version, 3.0 or
// 3.1: the document as the service reads it (a split one bundled, src/openapi/document/document.ts).
import { Validator } from '@seriousme/openapi-schema-validator'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadDocument } from '../src/openapi/document/document.ts'

const path = process.argv[2] ?? fileURLToPath(new URL('../openapi.yaml', import.meta.url))
const name = relative(process.cwd(), path)
let document
try {
  document = (await loadDocument(path)).document
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
const validator = new Validator()
const result = await validator.validate(structuredClone(document))
if (result.valid) {
  console.log(`${name} is a valid OpenAPI ${validator.version} document`)
} else {
  console.error(`${name} is not a valid OpenAPI ${validator.version} document:`)
  console.error(JSON.stringify(result.errors, null, 2))
  process.exitCode = 1
}
