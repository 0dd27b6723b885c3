// The bench's instruments: servers pinned to their own core, wrk pinned to the others, and the
// server's CPU time per request from its own counters (/proc), which a busy load generator
// cannot distort the way it distorts req/s.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/helpers/ports.ts'
import { nodeCommandOf, type NodeCommand } from '../../test/helpers/npm-script.ts'
import { statFields } from '../../test/helpers/proc.ts'

export const root = fileURLToPath(new URL('../../', import.meta.url))
const LUA = join(root, 'scripts/bench/load.lua')
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100)

/** Core 0 serves; the rest generate load (and host PostgreSQL). One core: nothing is pinned. */
const cores = availableParallelism()
export const CPUS = cores >= 2
  ? { server: '0', load: cores === 2 ? '1' : `1-${cores - 1}`, loadThreads: cores - 1, pinned: true }
  : { server: '0', load: '0', loadThreads: 1, pinned: false }

/** A command pinned to the given cores, when the machine has more than one. */
export function pinned (cpus: string, command: string[]): string[] {
  return CPUS.pinned ? ['taskset', '-c', cpus, ...command] : command
}

/** A commit built by its own `npm run build`, and what its `npm start` runs. */
export interface BuiltRef { ref: string, dir: string, start: NodeCommand, remove: () => void }

/**
 * Builds a commit, as its own `npm run build` does, in a temp folder: with the repo's node_modules
 * when its lockfile is this one's, else with its own (`npm ci`).
 */
export function buildRef (ref: string): BuiltRef {
  const tree = mkdtempSync(join(tmpdir(), 'plant-store-before-'))
  execFileSync('git', ['worktree', 'add', '--detach', '--force', tree, ref], { cwd: root, stdio: 'ignore' })
  const remove = (): void => { spawnSync('git', ['worktree', 'remove', '--force', tree], { cwd: root }); rmSync(tree, { recursive: true, force: true }) }
  try {
    const lockfile = (dir: string): string => readFileSync(join(dir, 'package-lock.json'), 'utf8')
    if (lockfile(tree) === lockfile(root)) symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'))
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: tree, stdio: 'inherit' })
    execFileSync('npm', ['run', 'build'], { cwd: tree, stdio: 'inherit' })
  } catch (err) {
    remove()
    throw err
  }
  return { ref, dir: tree, start: nodeCommandOf(tree, 'start'), remove }
}

export interface Server { name: string, url: string, child: ChildProcess, startupMs: number }

/**
 * Starts a server, run as `script` (an npm script's, nodeCommandOf) with `env` besides, on its
 * own core (null: unpinned) and times it from spawn to its first answered request. `wrapper` runs
 * Node under another command (strace).
 */
export async function startServer (name: string, script: NodeCommand, env: Record<string, string>, cpus: string | null = CPUS.server, wrapper: string[] = []): Promise<Server> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const began = performance.now()
  const node = [...wrapper, process.execPath, ...script.args]
  const [command, ...rest] = cpus === null ? node : pinned(cpus, node)
  const child = spawn(command, rest, { cwd: root, env: { PATH: process.env.PATH, ...script.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: 'ignore' })
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch {}
    await sleep(2)
  }
  return { name, url, child, startupMs: performance.now() - began }
}

export async function stopServer (server: Server): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

/** CPU seconds a process has used so far, all its threads, user and system. */
export function cpuSeconds (pid: number): number {
  const fields = statFields(pid)
  if (fields === undefined) throw new Error(`process ${pid} is gone`)
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** The most memory the process has held, MiB (VmHWM). */
export function peakRssMiB (pid: number): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
}

export interface Load {
  /** Requests answered, and over how long. */
  requests: number
  seconds: number
  p50Ms: number
  p99Ms: number
  socketErrors: number
  /** Answers outside 2xx and 3xx. */
  non2xx: number
  /** CPU seconds wrk used per second of the run: how hard the load generator had to work. */
  loadCpu: number
}

export interface LoadOptions {
  url: string
  connections: number
  seconds: number
  token?: string
  /** A file of tokens, one a line, sent in turn instead of `token`. */
  tokensFile?: string
  /** A fixed body for every request; else a new plant per request with ids from firstId on. */
  body?: string
  firstId?: number
  /** The cores wrk runs on: the load cores by default, null for no pinning. */
  cpus?: string | null
  /** GET `path` instead of POST /plants. */
  get?: string
}

/** Runs wrk on the load cores against POST /plants (or a GET). */
export async function runLoad ({ url, connections, seconds, token, tokensFile, body, firstId = 1, cpus = CPUS.load, get }: LoadOptions): Promise<Load> {
  const command = ['wrk', '-t', String(CPUS.loadThreads), '-c', String(connections), '-d', `${seconds}s`, '-s', LUA, `${url}${get ?? '/plants'}`]
  const wrk = cpus === null ? command : pinned(cpus, command)
  // `times` prints the CPU time of the shell's children: wrk's own cost.
  const child = spawn('bash', ['-c', '"$@" && times', 'bench', ...wrk], {
    env: {
      ...process.env,
      BENCH_TOKEN: token ?? '',
      BENCH_TOKENS_FILE: tokensFile ?? '',
      BENCH_LOAD_THREADS: String(CPUS.loadThreads),
      BENCH_METHOD: get === undefined ? 'POST' : 'GET',
      ...(body === undefined ? { BENCH_FIRST_ID: String(firstId) } : { BENCH_BODY: body })
    }
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const status = await new Promise((resolve) => child.on('close', resolve))
  if (status !== 0) throw new Error(`wrk failed: ${stderr}${stdout}`)
  const json = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"requests"')) ?? 'null')
  const [user, system] = stdout.trim().split('\n').at(-1)!.split(/\s+/).map((t) => {
    const [, minutes, secs] = /^(\d+)m([\d.]+)s$/.exec(t) ?? []
    return Number(minutes) * 60 + Number(secs)
  })
  return {
    requests: json.requests,
    seconds: json.seconds,
    p50Ms: json.p50_ms,
    p99Ms: json.p99_ms,
    socketErrors: json.socket_errors,
    non2xx: json.non_2xx,
    loadCpu: (user + system) / json.seconds
  }
}

export interface Measured extends Load {
  /** Server CPU time per answered request, µs. */
  cpuUsPerRequest: number
  /** Server CPU seconds per second of the run: near 1 when its core was saturated. */
  serverCpu: number
}

/** The server's core busy, the least over rounds; near 1.00 means it was saturated, so the load kept up. */
export function coreBusy (runs: Measured[]): string {
  const least = Math.min(...runs.map((r) => r.serverCpu))
  return least >= 0.9 ? `${fmt(least, 2)}` : `${fmt(least, 2)} (not saturated)`
}

/** Loads a server process (or several, each with its own load) and reads what the servers spent. */
export async function measure (pids: number[], loads: LoadOptions[]): Promise<Measured> {
  const cpu = (): number => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  const before = cpu()
  const runs = await Promise.all(loads.map((load) => runLoad(load)))
  const spent = cpu() - before
  const requests = runs.reduce((n, r) => n + r.requests, 0)
  const seconds = Math.max(...runs.map((r) => r.seconds))
  return {
    requests,
    seconds,
    // Several loads: the worst of their percentiles.
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    socketErrors: runs.reduce((n, r) => n + r.socketErrors, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    loadCpu: runs.reduce((n, r) => n + r.loadCpu, 0),
    cpuUsPerRequest: spent / requests * 1e6,
    serverCpu: spent / seconds
  }
}

/** A load as a scenario gives it: everything but its length and its first id, which each run sets. */
export type LoadSpec = Omit<LoadOptions, 'seconds' | 'firstId'>

// A fresh process keeps getting cheaper for several seconds, as V8 optimizes: every server gets
// a mixed warm-up of all its loads, then a short one before each measurement.
const WARMUP_SECONDS = 6
const SHORT_WARMUP_SECONDS = 1

/** Every load at once, unmeasured, sharing their connections: a fresh server's first seconds are spent compiling. */
export async function warmUp (loads: LoadSpec[], freshIds: () => number): Promise<void> {
  await Promise.all(loads.map(async (load) => await runLoad({ ...load, connections: Math.ceil(load.connections / loads.length), seconds: WARMUP_SECONDS, firstId: freshIds() })))
}

/** A short warm-up, then one measured run of `load` on `server`; throws on any answer but `status`, or a socket error. */
export async function measureLoad (server: Server, load: LoadSpec, seconds: number, freshIds: () => number, status = 200): Promise<Measured> {
  await runLoad({ ...load, seconds: SHORT_WARMUP_SECONDS, firstId: freshIds() })
  const run = await measure([server.child.pid!], [{ ...load, seconds, firstId: freshIds() }])
  const wrong = status === 200 ? run.non2xx : run.requests - run.non2xx
  if (wrong > 0 || run.socketErrors > 0) throw new Error(`${server.name}: ${wrong} answers other than ${status}, ${run.socketErrors} socket errors`)
  return run
}

/** A server's run of freshServerRounds: what measureLoad measured, and its peak RSS (VmHWM) after it. */
export type FreshRun = Measured & { peakRssMiB: number }

/**
 * Rounds of fresh servers, each measured alone under `load` after a warm-up: in each round every
 * server of `starts` is started, measured and stopped in turn, in an order rotated round by round
 * so that drift hits all alike. Each server's runs, by its name.
 */
export async function freshServerRounds (section: string, starts: Record<string, (name: string) => Promise<Server>>, load: Omit<LoadSpec, 'url'>, { rounds, seconds, freshIds }: { rounds: number, seconds: number, freshIds: () => number }): Promise<Record<string, FreshRun[]>> {
  const names = Object.keys(starts)
  const runs: Record<string, FreshRun[]> = {}
  for (let round = 1; round <= rounds; round++) {
    const shift = round % names.length
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
      process.stderr.write(`${section}, round ${round}/${rounds}: ${name}\n`)
      const server = await starts[name](name)
      try {
        await warmUp([{ ...load, url: server.url }], freshIds)
        const measured = await measureLoad(server, { ...load, url: server.url }, seconds, freshIds)
        ;(runs[name] ??= []).push({ ...measured, peakRssMiB: peakRssMiB(server.child.pid!) })
      } finally {
        await stopServer(server)
      }
    }
  }
  return runs
}

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
/** Ratios as the bench prints them: their median, and their range in brackets. */
export const spread = (ratios: number[]): string => `${fmt(median(ratios), 2)}× (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})`
export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
