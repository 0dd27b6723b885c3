// What "released" means here, read from the repository: no release server, so the repository is
// the record. A version is released when the API changelog (docs/api-changelog.md) has its entry,
// a heading `## <title> <version>: ...`; a version in openapi.yaml's history without one (a draft
// that was committed, say) was never released. A release's contract is the document where it was
// cut: on the main line (first-parent) of the history, the first commit whose document is at that
// version, counted from the commit where its entry, as it stands at HEAD, appeared. So a draft of
// the same number, committed and even given an entry that was later removed, is never a release.
// A release whose entry is written but not yet committed is the working tree's document.
import { execFileSync } from 'node:child_process'
import { basename, dirname, relative } from 'node:path'
import { load } from 'js-yaml'
import semver from 'semver'
import { bundledText } from './snapshot.ts'

// A local git command answers at once; a stuck one (a lock, a hook) must not hold `npm run check`.
const GIT_TIMEOUT_MS = 30_000
/** The changelog, from the document's folder. */
export const CHANGELOG = 'docs/api-changelog.md'

/** The history cannot say what was released: a shallow clone, no git, a version that is no semver. */
export class HistoryError extends Error {
  override name = 'HistoryError'
}

export interface Snapshot {
  /** The document's text. */
  text: string
  version: string
}

/** A release's document, and the commit it was cut in (short hash and date). */
export interface Release extends Snapshot {
  commit: { hash: string, date: string }
}

export interface Contract {
  current: Snapshot
  /** The released versions, as the changelog lists them. */
  releases: string[]
  /**
   * The release the current document must keep the promises of: its own version's, once that is
   * released, committed and changed since; else (the release as cut) the newest release below it.
   * Undefined when there is none.
   */
  baseline?: Release
  /** The newest release below the current version, as released: what its changelog entry compares with. */
  previous?: Release
}

const RELEASE_HEADING = /^## .*?\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?::|$)/gm

/** The versions a changelog's entries release. */
export function releasesIn (changelog: string): string[] {
  return [...changelog.matchAll(RELEASE_HEADING)].map((match) => match[1])
}

/** The semver in a document's info.version, or why there is none. */
export function versionOf (text: string, where: string): string {
  let version: unknown
  try {
    version = (load(text) as { info?: { version?: unknown } } | undefined)?.info?.version
  } catch (err) {
    throw new HistoryError(`${where} is not YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  if (typeof version !== 'string' || semver.valid(version) === null) {
    throw new HistoryError(`${where}: info.version must be a semantic version such as 1.2.0, got ${JSON.stringify(version)}`)
  }
  return version
}

/**
 * Reads the current document, the released versions, and the release it must keep the promises
 * of. `text` is the current document's, bundled; `files` what it was read from (a split document's
 * files: the commits that changed any of them count).
 */
export async function readContract (documentPath: string, text: string, changelog: string, files: string[] = [documentPath]): Promise<Contract> {
  const cwd = dirname(documentPath)
  const file = `./${basename(documentPath)}`
  const changelogFile = `./${CHANGELOG}`
  /** git's output, or undefined when it fails. */
  const tryGit = (...args: string[]): string | undefined => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', timeout: GIT_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch {
      return undefined
    }
  }
  const git = (...args: string[]): string => {
    const out = tryGit(...args)
    if (out === undefined) throw new HistoryError(`\`git ${args.join(' ')}\` failed in ${cwd}`)
    return out
  }
  const current: Snapshot = { text, version: versionOf(text, `${file} (the working tree)`) }
  if (tryGit('rev-parse', '--git-dir') === undefined) {
    throw new HistoryError(`${cwd} is not a git clone: the history holds what was released, so the gate needs it`)
  }
  if (git('rev-parse', '--is-shallow-repository').trim() === 'true') {
    throw new HistoryError('this is a shallow clone: the gate needs the history of openapi.yaml to know what was released. Fetch it with `git fetch --unshallow` (in GitHub Actions, `fetch-depth: 0`)')
  }
  const releases = releasesIn(changelog)
  // The commits that changed the document or the changelog, newest first; with no commit yet, none.
  const paths = [file, ...files.slice(1).map((path) => `./${relative(cwd, path)}`)]
  const log = tryGit('rev-parse', '--verify', '-q', 'HEAD') === undefined ? '' : git('log', '--first-parent', '--format=%h %cs', 'HEAD', '--', ...paths, changelogFile)
  const commits = log.split('\n').filter(Boolean).map((line) => { const [hash, date] = line.split(' '); return { hash, date } })

  // Each commit's document, bundled when it refers to other files (snapshot.ts), read before it is needed.
  const documents = await Promise.all(commits.map(async (commit) => await bundledText(basename(documentPath), git('show', `${commit.hash}:${file}`), (path) => git('show', `${commit.hash}:./${path}`))))
  const states: Array<{ document: Release, releases: string[] }> = []
  /** The document and the changelog's releases at the i-th commit, newest first (read once, when asked). */
  const at = (i: number): { document: Release, releases: string[] } | undefined => {
    if (i >= commits.length) return undefined
    while (states.length <= i) {
      const commit = commits[states.length]
      const committed = documents[states.length]
      // A commit from before the changelog existed releases nothing.
      const entries = tryGit('show', `${commit.hash}:${changelogFile}`) ?? ''
      states.push({ document: { text: committed, version: versionOf(committed, `${file} in commit ${commit.hash}`), commit }, releases: releasesIn(entries) })
    }
    return states[i]
  }
  /**
   * Where `version` was released: the first commit, from where its entry (as it stands at HEAD)
   * appeared, whose document is at that version. Undefined when HEAD's changelog has no entry for
   * it or no such commit follows (the release is being cut in the working tree).
   */
  /** The oldest commit of the run, up to HEAD, whose changelog has `version`'s entry; -1 when HEAD's has none. */
  const appeared = (version: string): number => {
    let i = -1
    while (at(i + 1)?.releases.includes(version) === true) i++
    return i
  }
  const releasedAt = (version: string): Release | undefined => {
    for (let i = appeared(version); i >= 0; i--) if (at(i)!.document.version === version) return at(i)!.document
    return undefined
  }
  /**
   * An earlier release's contract: where it was released or, for an entry written after its
   * version had moved on (1.0.0's here: the changelog began later), the first commit of the newest
   * run at that version before the entry appeared.
   */
  const released = (version: string): Release => {
    const own = releasedAt(version)
    if (own !== undefined) return own
    let i = appeared(version) + 1
    while (at(i) !== undefined && at(i)!.document.version !== version) i++
    if (at(i) === undefined) throw new HistoryError(`the changelog releases ${version}, but openapi.yaml never had that version on the main line of the history`)
    while (at(i + 1)?.document.version === version) i++
    return at(i)!.document
  }

  const below = releases.filter((version) => semver.lt(version, current.version)).sort(semver.rcompare)[0]
  const previous = below === undefined ? undefined : released(below)
  // The release as cut (uncommitted, or its own commit's document) is judged against the release
  // before it; a later change at the same version, against the release as cut.
  const own = releases.includes(current.version) ? releasedAt(current.version) : undefined
  return { current, releases, previous, baseline: own !== undefined && own.text !== current.text ? own : previous }
}

/** May `to` break clients of `from`? Only a new major version (below 1.0.0, a new minor) may. */
export function allowsBreaking (from: string, to: string): boolean {
  if (semver.major(to) !== semver.major(from)) return semver.major(to) > semver.major(from)
  return semver.major(to) === 0 && semver.minor(to) > semver.minor(from)
}

/** The smallest version above `from` that may break its clients. */
export function nextBreaking (from: string): string {
  return semver.major(from) === 0 ? `0.${semver.minor(from) + 1}.0` : `${semver.major(from) + 1}.0.0`
}
