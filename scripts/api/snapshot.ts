// The document as it stood in a commit, as the service reads it: one file, or, when it refers to
// other files, those files as they stood in that commit too, bundled (src/openapi/document/document.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { load } from 'js-yaml'
import { hasExternalRefs, loadDocument } from '../../src/openapi/document/document.ts'

/** The files a document's $refs name, relative to the document's folder (in the repository's terms). */
function externalFiles (text: string): string[] {
  const found = new Set<string>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (node === null || typeof node !== 'object') return
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && !value.startsWith('#') && !/^[a-z]+:/i.test(value)) found.add(value.split('#')[0])
      else walk(value)
    }
  }
  walk(load(text))
  return [...found]
}

/**
 * The bundled text of the document at `file` (a path in the repository) in a commit, whose entry's
 * text is `text`; `show` reads a file of that commit (git show commit:path).
 */
export async function bundledText (file: string, text: string, show: (path: string) => string): Promise<string> {
  let parsed: unknown
  try {
    parsed = load(text)
  } catch {
    return text // not YAML: the history says so, naming the commit, when it reads its version
  }
  if (!hasExternalRefs(parsed)) return text
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-snapshot-'))
  try {
    const seen = new Set<string>()
    const fetch = (path: string, content: string): void => {
      if (seen.has(path)) return
      seen.add(path)
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), content)
      for (const ref of externalFiles(content)) {
        const target = posix.normalize(posix.join(posix.dirname(path), ref))
        if (!seen.has(target)) fetch(target, show(target))
      }
    }
    fetch(posix.normalize(file), text)
    return (await loadDocument(join(dir, file), { prebundled: '' })).text
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
