// What "released" means here, read from the repository: no release server, so the repository is
// the record. A version is released when the API changelog (docs/api-changelog.md) has its entry,
// a heading `## <title> <version>: ...`; a version in openapi.yaml's history without one (a draft
// that was committed, say) was never released. A release's contract is the document as it stood
// when the version last came to openapi.yaml on the main line (first-parent) of the history: the
// first commit of the newest run of commits at that version. A release whose entry is written but
// not yet committed is the working tree's document.
import { execFileSync } from 'node:child_process'
import { basename, dirname } from 'node:path'
import { load } from 'js-yaml'
import semver from 'semver'

// A local git command answers at once; a stuck one (a lock, a hook) must not hold `npm run check`.
const GIT_TIMEOUT_MS = 30_000

/** The history cannot say what was released: a shallow clone, no git, a version that is no semver. */
export class HistoryError extends Error {
  override name = 'HistoryError'
}

export interface Snapshot {
  /** The document's text. */
  text: string
  version: string
  /** Where it is from: a commit (short hash and date), or the working tree. */
  commit?: { hash: string, date: string }
}

export interface Contract {
  current: Snapshot
  /** The released versions, as the changelog lists them. */
  releases: string[]
  /**
   * The release the current document must keep the promises of: its own version's, once that is
   * released and committed; else the newest release below it. Undefined when there is none.
   */
  baseline?: Snapshot
  /** The newest release below the current version, as released: what its changelog entry compares with. */
  previous?: Snapshot
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

/** Reads the current document, the released versions, and the release it must keep the promises of. */
export function readContract (documentPath: string, text: string, changelog: string): Contract {
  const cwd = dirname(documentPath)
  const file = `./${basename(documentPath)}`
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
  // With no commit yet, the history holds nothing.
  const log = tryGit('rev-parse', '--verify', '-q', 'HEAD') === undefined ? '' : git('log', '--first-parent', '--format=%h %cs', 'HEAD', '--', file)
  const commits = log.split('\n').filter(Boolean).map((line) => { const [hash, date] = line.split(' '); return { hash, date } })

  const snapshots: Snapshot[] = []
  const at = (i: number): Snapshot | undefined => {
    if (i >= commits.length) return undefined
    while (snapshots.length <= i) {
      const commit = commits[snapshots.length]
      const committed = git('show', `${commit.hash}:${file}`)
      snapshots.push({ text: committed, version: versionOf(committed, `${file} in commit ${commit.hash}`), commit })
    }
    return snapshots[i]
  }
  /** The release's contract: the first commit of the newest run at its version; undefined when never committed. */
  const releasedAs = (version: string): Snapshot | undefined => {
    let i = 0
    while (at(i) !== undefined && at(i)!.version !== version) i++
    if (at(i) === undefined) return undefined
    while (at(i + 1)?.version === version) i++
    return at(i)
  }

  const below = releases.filter((version) => semver.lt(version, current.version)).sort(semver.rcompare)[0]
  const previous = below === undefined ? undefined : releasedAs(below)
  if (below !== undefined && previous === undefined) throw new HistoryError(`the changelog releases ${below}, but openapi.yaml never had that version on the main line of the history`)
  const own = releases.includes(current.version) ? releasedAs(current.version) : undefined
  return { current, releases, previous, baseline: own ?? previous }
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
