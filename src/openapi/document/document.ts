import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DocumentError } from './document-error.ts'

/** The project's root: the nearest folder above this module with a package.json, from src/, from the build in dist/ and from the bundle in dist/bundle/ alike. */
function projectRoot (): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) throw new Error(`no package.json in a folder above ${fileURLToPath(import.meta.url)}`)
  }
}
// A bundle names its files from the project's root, so that it holds wherever the project is copied (an image).
const ROOT = projectRoot()
export const DOCUMENT_PATH = join(ROOT, 'openapi.yaml')
/** Where `npm run build` keeps openapi.yaml read (and bundled, when it refers to other files). */
export const PREBUNDLED_PATH = join(ROOT, 'dist/openapi.bundle.json')

export type OpenApiDocument = Record<string, any>

/** A bundle made at build (scripts/bundle.ts): the document, and the files it was made of with their digests. */
export interface Prebundled { files: Array<{ path: string, sha256: string }>, text: string, document: OpenApiDocument }

export interface LoadedDocument {
  /** The document as served: the file exactly as written, or, when it refers to other files, one self-contained YAML text. */
  text: string
  /** The same, parsed. */
  document: OpenApiDocument
  /** Every file it was read from, the entry first (what `npm run dev` watches). */
  files?: string[]
}

/** The versions read, by their `openapi` field; 3.0 is upgraded to 3.1 as it is read (upgrade.ts). */
const VERSIONS = /^3\.[01]\.\d+$/

/**
 * Reads an OpenAPI 3.0 or 3.1 document, YAML or JSON. The build's reading of it (`prebundled`,
 * for openapi.yaml) is taken while every file it was made of is unchanged: a start then parses one
 * JSON file and loads no YAML parser nor bundler. Otherwise the file is parsed, and a document that
 * $refs other files is bundled into one, with Redocly's bundler (loaded only then); what cannot be
 * read stops here, naming the file and the JSON pointer (DocumentError).
 */
export async function loadDocument (path: string = DOCUMENT_PATH, { prebundled = path === DOCUMENT_PATH ? PREBUNDLED_PATH : undefined }: { prebundled?: string } = {}): Promise<LoadedDocument> {
  const built = prebundled === undefined || prebundled === '' ? undefined : current(prebundled)
  if (built !== undefined) return built
  const name = relative(process.cwd(), path) || basename(path)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new DocumentError(name, '', `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const json = /^\s*\{/.test(text)
  // js-yaml for YAML, and for the YAML a JSON document is served as too: several times faster than
  // the yaml package at boot (~20 ms against ~90 ms).
  const { dump, load } = await import('js-yaml')
  let document: unknown
  try {
    // JSON by JSON.parse, many times faster than a YAML parser on a big document.
    document = json ? JSON.parse(text) : load(text, { filename: name })
  } catch (err) {
    throw new DocumentError(name, '', `is neither YAML nor JSON: ${(err as Error).message.split('\n')[0]}`)
  }
  checkVersion(name, document)
  if (hasExternalRefs(document)) {
    const { bundleDocument } = await import('./external-refs.ts')
    const bundled = await bundleDocument(path, name)
    checkVersion(name, bundled.document)
    return bundled
  }
  // A JSON document is served as YAML too: made from it when first asked for, not kept beside it.
  if (!json) return { text, document, files: [path] }
  return { get text () { return dump(document, { lineWidth: -1, noRefs: true }) }, document, files: [path] }
}

/** Refuses what is not an OpenAPI 3.0 or 3.1 document, saying what to do about it. */
function checkVersion (name: string, document: unknown): asserts document is OpenApiDocument {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new DocumentError(name, '', 'is not an OpenAPI document: it is not a mapping')
  const { openapi, swagger } = document as OpenApiDocument
  if (swagger !== undefined) {
    throw new DocumentError(name, '', `is Swagger ${swagger}, which is not read here: convert it to OpenAPI 3 first, for example with \`npx swagger2openapi ${basename(name)} -o openapi.yaml\``)
  }
  if (openapi === undefined) throw new DocumentError(name, '', 'is not an OpenAPI document: it has no openapi field')
  if (!VERSIONS.test(String(openapi))) throw new DocumentError(name, '', `is OpenAPI ${openapi}; the versions read are 3.0.x and 3.1.x`)
}

/** True when some $ref names another file (a relative path or a URL), not a place in this one. */
export function hasExternalRefs (node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasExternalRefs)
  if (node === null || typeof node !== 'object') return false
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return true
    if (hasExternalRefs(value)) return true
  }
  return false
}

const digestOf = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')

/** What the build keeps of a bundled document: it, and a digest of each file it was made of. */
export function prebundle ({ text, document, files = [] }: LoadedDocument): Prebundled {
  return { files: files.map((file) => ({ path: relative(ROOT, file), sha256: digestOf(file) })), text, document }
}

/** The bundle made at build, if each of its files is still as it was then. */
function current (path: string): LoadedDocument | undefined {
  try {
    const built = JSON.parse(readFileSync(path, 'utf8')) as Prebundled
    const files = built.files.map((file) => ({ ...file, path: resolve(ROOT, file.path) }))
    return files.every((file) => digestOf(file.path) === file.sha256) ? { text: built.text, document: built.document, files: files.map((file) => file.path) } : undefined
  } catch {
    return undefined
  }
}
