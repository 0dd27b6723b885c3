// npm run config:docs: writes docs/configuration.md from the configuration's sections. With
// --check (in npm run check) it writes nothing, and fails when the file is out of date.
import { readFileSync, writeFileSync } from 'node:fs'
import { SECTIONS } from '../src/config.ts'
import { configReference } from '../src/config/reference.ts'

const FILE = 'docs/configuration.md'
const reference = configReference(SECTIONS)
if (!process.argv.includes('--check')) {
  writeFileSync(FILE, reference)
  console.log(`wrote ${FILE}`)
} else if (readFileSync(FILE, 'utf8') !== reference) {
  console.error(`${FILE} is out of date with the configuration's sections (src/*/config.ts): run \`npm run config:docs\` and commit it.`)
  process.exitCode = 1
} else {
  console.log(`${FILE} is up to date`)
}
