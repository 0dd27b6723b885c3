import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

// The same relative path from src/openapi/ and from the build in dist/openapi/.
export const DOCUMENT_PATH = fileURLToPath(new URL('../../openapi.yaml', import.meta.url))

export type OpenApiDocument = Record<string, any>

export interface LoadedDocument {
  /** The file exactly as written, served byte-for-byte at /openapi.yaml. */
  text: string
  document: OpenApiDocument
}

export function loadDocument (path: string = DOCUMENT_PATH): LoadedDocument {
  const text = readFileSync(path, 'utf8')
  return { text, document: parse(text) as OpenApiDocument }
}
