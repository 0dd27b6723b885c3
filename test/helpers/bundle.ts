import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeCommandOf, type NodeCommand } from './npm-script.ts'

// The service as `npm start` runs it: the bundle `npm run build` makes in dist/bundle/. Test files
// that run it (in parallel, each in its own process) share one build: it is made again only when
// what it is built from has changed since, under a lock, so no test rebuilds it under another's
// running server.

const root = fileURLToPath(new URL('../../', import.meta.url))
const STAMP = join(root, 'dist/bundle.stamp')
const LOCK = join(root, 'dist/bundle.lock')
// What the build reads: the sources, their compiler settings, the bundler and the dependencies.
const INPUTS = ['src', 'tsconfig.json', 'scripts/bundle.ts', 'package-lock.json']
// A build takes seconds, tens on a loaded host; a lock held longer is a dead holder's.
const BUILD_TIMEOUT_MS = 180_000
const POLL_MS = 200

function files (path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true }).flatMap((entry) => files(join(path, entry.name)))
  } catch {
    return [path]
  }
}

/** A digest of every input file, by path and content. */
function inputsDigest (): string {
  const hash = createHash('sha256')
  for (const file of INPUTS.flatMap((input) => files(join(root, input))).sort()) hash.update(`${relative(root, file)}\0`).update(readFileSync(file)).update('\0')
  return hash.digest('hex')
}

const stamped = (digest: string): boolean => {
  try {
    return readFileSync(STAMP, 'utf8') === digest
  } catch {
    return false
  }
}

/** Holds the lock while `work` runs: a directory, made by one process at a time. */
async function locked (work: () => void): Promise<void> {
  const deadline = Date.now() + BUILD_TIMEOUT_MS
  mkdirSync(join(root, 'dist'), { recursive: true })
  for (;;) {
    try {
      mkdirSync(LOCK)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      if (Date.now() > deadline) rmSync(LOCK, { recursive: true, force: true })
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }
  try {
    work()
  } finally {
    rmSync(LOCK, { recursive: true, force: true })
  }
}

/** Builds the bundle unless it is built from the sources as they are; what `npm start` runs then. */
export async function builtBundle (): Promise<NodeCommand> {
  const digest = inputsDigest()
  if (!stamped(digest)) {
    await locked(() => {
      if (stamped(digest)) return // built by another test file while this one waited
      // A failed build's error message holds what it printed.
      execFileSync('npm', ['run', 'build'], { cwd: root, timeout: BUILD_TIMEOUT_MS, stdio: 'pipe' })
      writeFileSync(STAMP, digest)
    })
  }
  return nodeCommandOf(root, 'start')
}
