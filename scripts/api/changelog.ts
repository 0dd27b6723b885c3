// npm run api:changelog: every change since the release before this version (see history.ts), in Markdown,
// for consumers: what may break them, what was added or changed compatibly (oasdiff's changelog),
// and what only their documentation says differently (oasdiff's diff of descriptions, summaries,
// titles and examples). Cutting a release: bump info.version, put this at the top of
// docs/api-changelog.md, and commit.
import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load } from 'js-yaml'
import { contractOf, describe, projectFiles, whereOf } from './compat.ts'
import { changelog, diff, findOasdiff, headersAdded, type Change } from './oasdiff.ts'

// What a consumer reads, not runs: a change to any of these is documentation.
const DOCUMENTATION = new Set(['description', 'summary', 'title', 'example', 'examples'])
// The diff's own structure, which says nothing about where a change is.
const STRUCTURE = new Set(['modified', 'added', 'deleted', 'operations', 'content', 'schema', 'properties'])

/** The places in oasdiff's diff where only documentation changed, as readable paths. */
export function documentationChanges (node: unknown, path: string[] = []): string[] {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return []
  return Object.entries(node).flatMap(([key, value]) => DOCUMENTATION.has(key)
    ? [[...path, key].join(' › ')]
    : documentationChanges(value, STRUCTURE.has(key) ? path : [...path, key]))
}

const section = (title: string, items: string[]): string[] => ['', `### ${title}`, '', ...(items.length === 0 ? ['None.'] : items)]
const item = (change: Change): string => `- ${whereOf(change)}: ${change.text}`

export async function markdown (documentPath: string, binary: string): Promise<string> {
  // The release before this version: what its entry says changed since.
  const { current, previous: released } = await contractOf(documentPath)
  const title = String((load(current.text) as { info: { title?: unknown } }).info.title ?? 'The API')
  if (released === undefined) return `## ${title} ${current.version}\n\nThe first contract: nothing was released before it.\n`
  const { accepted } = projectFiles(documentPath)
  const changes = await changelog(binary, released.text, current.text, accepted)
  const differences = await diff(binary, released.text, current.text)
  return [
    `## ${title} ${current.version}: changes since ${released.version}`, '', `Compared with ${describe(released)}.`,
    ...section('Breaking', changes.filter((c) => c.level >= 2).map(item)),
    ...section('Additions and other compatible changes', [...changes.filter((c) => c.level < 2).map(item), ...headersAdded(differences).map(item)]),
    ...section('Documentation', documentationChanges(differences).map((where) => `- ${where}`))
  ].join('\n') + '\n'
}

if (realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const binary = findOasdiff()
  if (binary === undefined) {
    console.error(`No changelog: no oasdiff binary is published for ${process.platform}-${process.arch}.`)
    process.exitCode = 2
  } else {
    try {
      process.stdout.write(await markdown(resolve(process.argv[2] ?? 'openapi.yaml'), binary))
    } catch (err) {
      console.error(`No changelog: ${(err as Error).message}`)
      process.exitCode = 2
    }
  }
}
