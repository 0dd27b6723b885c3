import { execFileSync, type ChildProcess } from 'node:child_process'
import type { Test } from 'tap'
import type { Certificates } from './certificates.ts'
import { killGroup, spawnGroup } from './children.ts'
import { findDebianBinary } from './debian-binary.ts'
import { freePort } from './ports.ts'
import { listeningOn } from './listening.ts'

// Debian's redis-server for a test: on 127.0.0.1 and a free port, in memory only, with a password
// (as operators run it), killed with the test. It can be killed, started again on the same port
// (empty, as after a crash without persistence), frozen (SIGSTOP) and thawed.

export const REDIS_PASSWORD = 'redis-test-password-0123'

/** Whether Debian's redis-server is here (npm test's pretest installs it). */
export const hasRedis = (): boolean => findDebianBinary('redis-server', '--version') !== undefined

export interface TestRedis {
  /** redis://:password@127.0.0.1:port */
  url: string
  port: number
  /** SIGKILL: every connection drops, every count is lost. */
  kill: () => Promise<void>
  /** Started again, empty, on the same port. */
  start: () => Promise<void>
  /** SIGSTOP: connections stay open, nothing answers. */
  freeze: () => void
  thaw: () => void
  /** A command through redis-cli, its output. */
  cli: (...args: string[]) => string
}

export interface RedisOptions {
  /** Pinned to these cores (the bench's). */
  cpus?: string
  /** TLS only, with this certificate (rediss://). */
  tls?: Certificates
}

/** Starts it; killed by `t`'s teardown. */
export async function startRedis (t: Pick<Test, 'teardown'>, { cpus, tls }: RedisOptions = {}): Promise<TestRedis> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const listen = tls === undefined
    ? ['--port', String(port)]
    : ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no']
  const start = async (): Promise<void> => {
    const server = ['redis-server', ...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', REDIS_PASSWORD]
    const [command, ...args] = cpus === undefined ? server : ['taskset', '-c', cpus, ...server]
    child = spawnGroup(command, args, { stdio: 'ignore' })
    await listeningOn(port, child, 'redis-server')
  }
  const kill = async (): Promise<void> => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    killGroup(child)
    await exited
  }
  await start()
  t.teardown(kill)
  return {
    url: `${tls === undefined ? 'redis' : 'rediss'}://:${REDIS_PASSWORD}@127.0.0.1:${port}`,
    port,
    kill,
    start,
    freeze: () => { if (child !== undefined) killGroup(child, 'SIGSTOP') },
    thaw: () => { if (child !== undefined) killGroup(child, 'SIGCONT') },
    cli: (...args) => execFileSync('redis-cli', ['-p', String(port), ...(tls === undefined ? [] : ['--tls', '--cacert', tls.ca]), '--no-auth-warning', '-a', REDIS_PASSWORD, ...args], { encoding: 'utf8', timeout: 5000 }).trim()
  }
}
