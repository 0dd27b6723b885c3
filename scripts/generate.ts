// Regenerates generated/openapi.d.ts from openapi.yaml with openapi-typescript, and the type
// fixtures' types from their own document (test/openapi/type-fixtures/). The document is read as
// the service reads it: a split one bundled, each operation without an operationId given the one
// the service names it by.
// With --check it writes nothing, and fails with a diff when any output is stale; with --watch it
// writes again whenever a file of the document changes (npm run dev).
// Usage: generate.ts [--check] [document output]; paths are relative to the working directory
// (npm runs scripts at the root); without them, both pairs below.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { loadDocument } from '../src/openapi/document/document.ts'
import { operationIdNamer } from '../src/openapi/routes/operation-ids.ts'
import { METHODS } from '../src/openapi/routes/routes.ts'
import { watchDocument } from './watch-document.ts'

const header = (source: string): string => `/**
 * DO NOT EDIT. Generated from ${source} by \`npm run generate\` (scripts/generate.ts).
 * Edit ${source} and run the command again.
 */

`

/**
 * openapi-typescript types a response header given by $ref as always sent, whatever the header's
 * `required` says, and honours `required` only on a header given inline. So every response
 * header $ref is replaced by the header it names before the types are made.
 */
function withInlineHeaders (document: any): any {
  const inline = (response: any) => {
    for (const [name, header] of Object.entries<any>(response?.headers ?? {})) {
      if (typeof header.$ref === 'string') response.headers[name] = document.components.headers[header.$ref.split('/').at(-1)]
    }
  }
  for (const response of Object.values(document.components?.responses ?? {})) inline(response)
  for (const pathItem of Object.values<any>(document.paths ?? {})) {
    for (const operation of Object.values<any>(pathItem)) for (const response of Object.values(operation?.responses ?? {})) inline(response)
  }
  return document
}

/** Every operation with an operationId: the one the document gives, or the one the service makes from its method and path (operation-ids.ts). */
function withOperationIds (document: any): any {
  const nameOf = operationIdNamer(document.paths ?? {}, METHODS)
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method]
      if (operation !== null && typeof operation === 'object') operation.operationId = nameOf(operation, method, path)
    }
  }
  return document
}

export async function generate (document: URL): Promise<string> {
  // The document as the service reads it: a split one bundled (document.ts).
  const loaded = await loadDocument(fileURLToPath(document))
  const ast = await openapiTS(withOperationIds(withInlineHeaders(structuredClone(loaded.document))), {
    // JSON numbers above 2^53 arrive as bigint (src/http/json-body.ts): say so in the types,
    // so no handler can treat an int64 as a plain, lossy number.
    transform (schema) {
      if (schema.format !== 'int64') return undefined
      return ts.factory.createUnionTypeNode([
        ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword),
        ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword)
      ])
    }
  })
  return header(relative(process.cwd(), fileURLToPath(document))) + astToString(ast)
}

const PAIRS: Array<[string, string]> = [
  ['openapi.yaml', 'generated/openapi.d.ts'],
  ['test/openapi/type-fixtures/openapi.yaml', 'test/openapi/type-fixtures/openapi.d.ts'],
  ['test/openapi/type-fixtures/answers.yaml', 'test/openapi/type-fixtures/answers.d.ts']
]

async function main (): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  const pairs: Array<[string, string]> = args.length === 0 ? PAIRS : [[args[0], args[1] ?? 'generated/openapi.d.ts']]
  if (!process.argv.includes('--watch')) {
    for (const [document, output] of pairs) await generateOne(document, output, process.argv.includes('--check'))
    return
  }
  // npm run dev: each document's types, then again on each change of any of its files; a document
  // that does not read yet says why, and is watched all the same.
  for (const [document, output] of pairs) {
    const once = async () => await generateOne(document, output, false).catch((err) => console.error((err as Error).message))
    await once()
    await watchDocument(resolve(document), once)
  }
}

async function generateOne (documentArg: string, outputArg: string, check: boolean): Promise<void> {
  const documentUrl = pathToFileURL(resolve(documentArg))
  const outputPath = pathToFileURL(resolve(outputArg))
  const fresh = await generate(documentUrl)
  const outputName = relative(process.cwd(), fileURLToPath(outputPath))
  if (!check) {
    writeFileSync(outputPath, fresh)
    console.log(`wrote ${outputName}`)
    return
  }
  const committed = readFileSync(outputPath, 'utf8')
  if (committed === fresh) {
    console.log(`${outputName} is up to date`)
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-generate-'))
  try {
    const freshPath = join(dir, 'openapi.d.ts')
    writeFileSync(freshPath, fresh)
    spawnSync('diff', ['-u', '--label', `${outputName} (committed)`, '--label', `${outputName} (from the document)`, fileURLToPath(outputPath), freshPath], { stdio: 'inherit' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.error(`\n${outputName} is stale: run \`npm run generate\` and commit the result.`)
  process.exitCode = 1
}

// Run as a script (possibly through a symlink), not when imported by a test.
if (realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
