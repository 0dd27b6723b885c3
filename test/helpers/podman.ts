import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

// Podman as the image's tests drive it: every call bounded, with the project's own configuration
// (CONTAINERS_CONF, as npm run image uses it), every container removed when its test ends.

const root = fileURLToPath(new URL('../../', import.meta.url))
const env = { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(root, 'scripts/image/containers.conf') }
// A podman command answers in seconds; a stop waits for the drain (SHUTDOWN_TIMEOUT_MS, 10 s).
const PODMAN_TIMEOUT_MS = 60_000

export const IMAGE = 'localhost/plant-store:latest'
/** How operators are told to run it: a read-only root, no capabilities, no privilege to gain. */
export const HARDENED = ['--read-only', '--cap-drop=ALL', '--security-opt', 'no-new-privileges']

export interface Ran { status: number | null, stdout: string, stderr: string }

/** Runs podman to its end, bounded. */
export function podman (...args: string[]): Ran {
  const result = spawnSync('podman', args, { env, encoding: 'utf8', timeout: PODMAN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 })
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? `${result.error ?? ''}` }
}

/** Runs podman in the background (a stop while requests are in flight), bounded. */
export function podmanLater (...args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('podman', args, { env, timeout: PODMAN_TIMEOUT_MS })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

/** A container of the image (or another), detached, removed when the test ends. */
export function startContainer (t: Test, name: string, options: string[], args: string[] = [], image = IMAGE): void {
  podman('rm', '--force', '--time', '0', name)
  const started = podman('run', '--detach', '--name', name, ...options, image, ...args)
  if (started.status !== 0) throw new Error(`podman run ${name} failed: ${started.stderr}`)
  t.teardown(() => { podman('rm', '--force', '--time', '0', name) })
}

/** What a container printed, both streams. */
export const logsOf = (name: string): string => { const { stdout, stderr } = podman('logs', name); return stdout + stderr }

/** Waits until `url` answers 200, bounded; fails with what the container said. */
export async function answering (url: string, name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).status === 200) return
    } catch {}
    await sleep(100)
  }
  throw new Error(`${url} did not answer 200 in ${timeoutMs} ms; ${name} said: ${logsOf(name).slice(-1000)}`)
}

/** Valkey's stand-in in the image's suite (no registry here): Debian's Redis, which speaks Valkey's protocol, under Valkey's command's name. */
export const VALKEY_IMAGE = 'localhost/plant-store-test-valkey:latest'

/** Builds VALKEY_IMAGE, as the base is built: Debian's redis-server and what it needs, extracted by mmdebstrap, no shell run. */
export function buildValkeyImage (): void {
  const work = mkdtempSync(join(tmpdir(), 'plant-store-valkey-'))
  const run = (command: string, ...args: string[]): string => {
    const result = spawnSync(command, args, { env, encoding: 'utf8', timeout: PODMAN_TIMEOUT_MS * 5 })
    if (result.status !== 0) throw new Error(`${command} ${args[0]} failed: ${result.stderr ?? result.error}`)
    return result.stdout.trim()
  }
  try {
    const sources = existsSync('/etc/apt/sources.list.d/debian.sources') ? '/etc/apt/sources.list.d/debian.sources' : '/etc/apt/sources.list'
    run('mmdebstrap', '--quiet', '--variant=extract', '--include=redis-server', 'bookworm', join(work, 'root'), sources)
    symlinkSync('redis-server', join(work, 'root/usr/bin/valkey-server'))
    const container = run('buildah', 'from', 'scratch')
    run('buildah', 'add', '--quiet', container, join(work, 'root'), '/')
    run('buildah', 'config', '--user', '65532:65532', container)
    run('buildah', 'commit', '--quiet', '--rm', container, VALKEY_IMAGE)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
