// npm run lint:spec: Spectral, with the rules of scripts/spectral.yaml, on the document as the
// service reads it. A document split over files is linted as its bundle, so that the ruleset's
// decisions, made by place (`**#/components/schemas/Plant/...`), hold wherever a schema's file
// lives; each finding is then named in the file a person edits, at its line. Fails on warnings.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LineCounter, parseDocument, isMap, isSeq, type Document, type Node } from 'yaml'
import { loadDocument } from '../src/openapi/document/document.ts'
import { tokensOf } from '../src/openapi/schemas/schema.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
const entry = resolve(process.argv[2] ?? join(root, 'openapi.yaml'))
const SEVERITIES = ['error', 'warning', 'information', 'hint']

interface Finding { code: string, message: string, path: Array<string | number>, severity: number }

const loaded = await loadDocument(entry).catch((err: Error) => {
  console.error(err.message)
  process.exit(1)
})
const bundled = (loaded.files?.length ?? 1) > 1
const scratch = bundled ? mkdtempSync(join(tmpdir(), 'lint-spec-')) : undefined
const target = scratch === undefined ? entry : join(scratch, 'openapi.yaml')
let findings: Finding[]
try {
  if (scratch !== undefined) writeFileSync(target, loaded.text)
  findings = JSON.parse(spectral(target)) as Finding[]
} finally {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
}

/** Spectral's findings as JSON; it exits 1 when it finds anything, which is ours to judge. */
function spectral (file: string): string {
  const args = [join(root, 'node_modules/@stoplight/spectral-cli/dist/index.js'), 'lint', file, '--ruleset', join(root, 'scripts/spectral.yaml'), '--format', 'json', '--quiet']
  try {
    return execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  } catch (err) {
    const { status, stdout, stderr } = err as { status: number, stdout: string, stderr: string }
    if (status === 1 && stdout.trim().startsWith('[')) return stdout
    console.error(stderr || stdout)
    process.exit(status ?? 1)
  }
}

// Each source file read once, with its lines counted.
const sources = new Map<string, { doc: Document, lines: LineCounter }>()
const sourceOf = (file: string) => {
  let source = sources.get(file)
  if (source === undefined) {
    const lines = new LineCounter()
    sources.set(file, source = { doc: parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines }), lines })
  }
  return source
}
/** The node under `key`, and where it is written: a mapping's key, a sequence's item. */
const childOf = (node: unknown, key: string | number): { node: unknown, at: Node } | undefined => {
  if (isMap(node)) {
    const pair = node.items.find((item) => (item.key as { value?: unknown } | null)?.value === String(key))
    return pair === undefined ? undefined : { node: pair.value, at: pair.key as Node }
  }
  const item = isSeq(node) ? node.items[Number(key)] as Node | undefined : undefined
  return item === undefined ? undefined : { node: item, at: item }
}

/** Where a place in the bundle is written: following the path from the entry, into each file a $ref leads to; the file and its line. */
function writtenAt (path: Array<string | number>): string {
  let file = entry
  let node: unknown = sourceOf(file).doc.contents
  let at = node as Node | undefined
  for (const key of path) {
    // A $ref to another file: go on in that file, from the place it points at.
    const ref = isMap(node) ? node.get('$ref') : undefined
    if (typeof ref === 'string' && !ref.startsWith('#')) {
      const [relativePath, pointer = ''] = ref.split('#')
      file = resolve(dirname(file), relativePath)
      node = sourceOf(file).doc.contents
      for (const token of tokensOf(pointer)) node = childOf(node, token)?.node
    }
    const next = childOf(node, key)
    if (next === undefined) break // made by the bundler (a component it named): the nearest place written
    ;({ node, at } = next)
  }
  const offset = at?.range?.[0] ?? 0
  const { line, col } = sourceOf(file).lines.linePos(offset)
  return `${relative(process.cwd(), file) || file}:${line}:${col}`
}

for (const finding of findings) {
  console.log(`${writtenAt(finding.path)}  ${SEVERITIES[finding.severity]}  ${finding.code}  ${finding.message}  (#/${finding.path.join('/')})`)
}
const failing = findings.filter((finding) => finding.severity <= 1).length
console.log(findings.length === 0 ? `${relative(process.cwd(), entry)}: no problems found` : `${findings.length} problems, ${failing} of them warnings or errors`)
process.exitCode = failing > 0 ? 1 : 0
