import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { dump } from 'js-yaml'

// A document split over several files, as teams split theirs: each schema of components in a
// file of its own under schemas/, each path item under paths/, in YAML, every $ref between them a
// relative path to a file (and a pointer into it where it points inside one). The tests of the
// engine's bundling (document.ts) make one from a real document.

const fileOf = (name: string) => `${name.replace(/[^\w.-]/g, '_')}.yaml`

/** Writes `document` into `dir` split over files; the entry's path. */
export function splitDocument (document: Record<string, any>, dir: string): string {
  const schemas: Record<string, unknown> = document.components?.schemas ?? {}
  const SCHEMA = '#/components/schemas/'
  /** A $ref as it is written from a file in `from` (the entry's folder, schemas/ or paths/). */
  const rewrite = (node: unknown, from: 'root' | 'schemas' | 'paths'): unknown => {
    if (Array.isArray(node)) return node.map((item) => rewrite(item, from))
    if (node === null || typeof node !== 'object') return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA)) {
        const [name, ...rest] = value.slice(SCHEMA.length).split('/')
        const file = fileOf(decodeURIComponent(name).replace(/~1/g, '/').replace(/~0/g, '~'))
        out.$ref = (from === 'schemas' ? `./${file}` : from === 'paths' ? `../schemas/${file}` : `./schemas/${file}`) + (rest.length === 0 ? '' : `#/${rest.join('/')}`)
      } else if (key === '$ref' && typeof value === 'string' && value.startsWith('#/') && from !== 'root') {
        // Elsewhere in the entry: through it.
        out.$ref = `../openapi.yaml${value}`
      } else {
        out[key] = rewrite(value, from)
      }
    }
    return out
  }
  mkdirSync(join(dir, 'schemas'), { recursive: true })
  mkdirSync(join(dir, 'paths'), { recursive: true })
  for (const [name, schema] of Object.entries(schemas)) writeFileSync(join(dir, 'schemas', fileOf(name)), dump(rewrite(schema, 'schemas'), { noRefs: true }))
  const entry = rewrite({ ...document, paths: {} }, 'root') as Record<string, any>
  let n = 0
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    const file = `paths/${n++}.yaml`
    writeFileSync(join(dir, file), dump(rewrite(item, 'paths'), { noRefs: true }))
    entry.paths[path] = { $ref: `./${file}` }
  }
  // The entry keeps its components, each schema a ref to its file: what other files may still point at.
  if (entry.components?.schemas !== undefined) entry.components.schemas = Object.fromEntries(Object.keys(schemas).map((name) => [name, { $ref: `./schemas/${fileOf(name)}` }]))
  writeFileSync(join(dir, 'openapi.yaml'), dump(entry, { noRefs: true }))
  return join(dir, 'openapi.yaml')
}
