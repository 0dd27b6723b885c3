// Validates openapi.yaml (or the file given) against the OpenAPI 3.1 schema.
import { Validator } from '@seriousme/openapi-schema-validator'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const path = process.argv[2] ?? fileURLToPath(new URL('../openapi.yaml', import.meta.url))
const name = relative(process.cwd(), path)
const validator = new Validator()
const result = await validator.validate(path)
if (result.valid && validator.version === '3.1') {
  console.log(`${name} is a valid OpenAPI ${validator.version} document`)
} else {
  console.error(`${name} is not a valid OpenAPI 3.1 document (found version ${validator.version}):`)
  console.error(JSON.stringify(result.errors, null, 2))
  process.exitCode = 1
}
