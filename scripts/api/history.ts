// What "released" means here, read from git: no release server, so the history is the record.
// A version is released when it first appears on the main line (first-parent) of openapi.yaml's
// history. The released contract is the document as it stood then: for the current version when
// it has been committed, or else for the last committed version (a release being cut). Beside it,
// the previous document (the last committed one that differs from this one), since a client may
// have been generated from any document that was served.
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
  /** The released contract; undefined when the document was never committed. */
  released?: Snapshot
  /** The last committed document that differs from the current one; undefined when there is none. */
  previous?: Snapshot
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

/** Reads the current document and what the history says was released before it. */
export function readContract (documentPath: string, text: string): Contract {
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
    throw new HistoryError(`${cwd} is not a git clone: the history is the record of what was released, so the gate needs it`)
  }
  if (git('rev-parse', '--is-shallow-repository').trim() === 'true') {
    throw new HistoryError('this is a shallow clone: the gate needs the history of openapi.yaml to know what was released. Fetch it with `git fetch --unshallow` (in GitHub Actions, `fetch-depth: 0`)')
  }
  // With no commit yet, nothing was ever released.
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
  /** Where the run of documents at `version`, starting at index `from`, began. */
  const firstOf = (version: string, from: number): Snapshot => {
    let i = from
    while (at(i + 1)?.version === version) i++
    return at(i)!
  }

  let differing = 0
  while (at(differing) !== undefined && at(differing)!.text === text) differing++
  const previous = at(differing)
  const newest = at(0)
  if (newest === undefined) return { current, previous }
  const released = newest.version === current.version ? firstOf(current.version, 0) : firstOf(newest.version, 0)
  return { current, released, previous }
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
