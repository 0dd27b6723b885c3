import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { killGroup, spawnGroup } from './children.ts'
import { logExcerpt } from './log-file.ts'

// A copy of this project to do to it what a maintainer does: edit, run its npm scripts, commit.
const root = fileURLToPath(new URL('../../', import.meta.url))
// Bounds on each step: a step that hangs fails the test with what it printed.
const STEP_TIMEOUT_MS = 240_000

/** The project's environment for a child, without what tap tells its own children. */
const childEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TAP|_TAPJS|NODE_OPTIONS|TS_NODE)/.test(name)))

export interface Step { status: number | null, output: string }

/**
 * Runs a command in `cwd` to its end (bounded: past STEP_TIMEOUT_MS its process group is killed):
 * its exit status, and its standard error then output. Steps that need not wait for each other
 * may run side by side.
 */
export async function run (cwd: string, command: string, ...args: string[]): Promise<Step> {
  const child = spawnGroup(command, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const timer = setTimeout(() => killGroup(child), STEP_TIMEOUT_MS)
  const status = await new Promise<number | null>((resolve) => {
    child.once('error', (err) => { stderr += err.message })
    child.once('close', resolve)
  })
  clearTimeout(timer) // what it started and left running went with it (spawnGroup)
  return { status, output: `${stderr}${stdout}` }
}

/** Asserts a step exited 0; a failure's message ends with its output's last lines, and names the file with all of it. */
export function succeeds (t: Test, what: string, step: Step): void {
  t.equal(step.status, 0, step.status === 0 ? `${what} passes` : `${what} failed (${step.status}): ${logExcerpt(what, step.output)}`)
}

/** git in `dir`, as a test's author. */
export const gitIn = (dir: string) => (...args: string[]): string => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, encoding: 'utf8' })

/** A git clone of this project with the working tree's files on top, as one more commit, and its node_modules linked. */
export function copyOfProject (dir: string): string {
  const copy = join(dir, 'project')
  execFileSync('git', ['clone', '-q', '--no-local', root, copy])
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean)
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    try { copyFileSync(join(root, file), join(copy, file)) } catch { /* deleted in the working tree */ }
  }
  const git = gitIn(copy)
  git('add', '-A')
  if (git('status', '--porcelain') !== '') git('commit', '-q', '-m', 'the working tree')
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))
  return copy
}

/** Puts a release's entry at the top of the copy's docs/api-changelog.md, as the README's release steps say. */
export function addChangelogEntry (copy: string, entry: string): void {
  const file = join(copy, 'docs/api-changelog.md')
  const changelog = readFileSync(file, 'utf8')
  const first = changelog.indexOf('\n## ') + 1
  writeFileSync(file, changelog.slice(0, first) + entry + '\n' + changelog.slice(first))
}
