// Regenerates generated/openapi.d.ts from openapi.yaml with openapi-typescript.
// With --check it writes nothing, and fails with a diff when generated/ is stale.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'

const root = new URL('../', import.meta.url)
const documentUrl = new URL('openapi.yaml', root)
const outputPath = new URL('generated/openapi.d.ts', root)

const HEADER = `/**
 * DO NOT EDIT. Generated from openapi.yaml by \`npm run generate\` (scripts/generate.ts).
 * Edit openapi.yaml and run the command again.
 */

`

export async function generate (document: URL = documentUrl): Promise<string> {
  const ast = await openapiTS(document, {
    // JSON numbers above 2^53 arrive as bigint (src/json-body.ts): say so in the types,
    // so no handler can treat an int64 as a plain, lossy number.
    transform (schema) {
      if (schema.format !== 'int64') return undefined
      return ts.factory.createUnionTypeNode([
        ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword),
        ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword)
      ])
    }
  })
  return HEADER + astToString(ast)
}

async function main (): Promise<void> {
  const fresh = await generate()
  if (!process.argv.includes('--check')) {
    writeFileSync(outputPath, fresh)
    console.log('wrote generated/openapi.d.ts')
    return
  }
  const committed = readFileSync(outputPath, 'utf8')
  if (committed === fresh) {
    console.log('generated/ is up to date with openapi.yaml')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-generate-'))
  try {
    const freshPath = join(dir, 'openapi.d.ts')
    writeFileSync(freshPath, fresh)
    spawnSync('diff', ['-u', '--label', 'generated/openapi.d.ts (committed)', '--label', 'generated/openapi.d.ts (from openapi.yaml)', outputPath.pathname, freshPath], { stdio: 'inherit' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.error('\ngenerated/ is stale: run `npm run generate` and commit the result.')
  process.exitCode = 1
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main()
