import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseDocument, type Document } from 'yaml'

// The same relative path from src/openapi/ and from the build in dist/openapi/.
export const DOCUMENT_PATH = fileURLToPath(new URL('../../openapi.yaml', import.meta.url))

export type OpenApiDocument = Record<string, any>

export interface LoadedDocument {
  /** The file exactly as written. */
  text: string
  /** Its YAML syntax tree, which knows where each value stands in the text. */
  syntax: Document
  document: OpenApiDocument
}

export function loadDocument (path: string = DOCUMENT_PATH): LoadedDocument {
  const text = readFileSync(path, 'utf8')
  const syntax = parseDocument(text)
  if (syntax.errors.length > 0) throw syntax.errors[0]
  return { text, syntax, document: syntax.toJS() as OpenApiDocument }
}
