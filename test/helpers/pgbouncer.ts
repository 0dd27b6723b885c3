import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { killGroup, spawnGroup } from './children.ts'
import { findDebianBinary } from './debian-binary.ts'
import { accepting, postgresUser } from './embedded-postgres.ts'
import { freePort } from './ports.ts'
import { logExcerpt } from './log-file.ts'

// Debian's PgBouncer in front of a test's (or the bench's) PostgreSQL, in transaction pooling, as
// platforms run it: each transaction gets any server connection, and startup options are refused.
// It runs as the server's user (PgBouncer will not run as root), on 127.0.0.1 and a free port.

/** The pgbouncer binary, or undefined where Debian's package is not installed. */
export const findPgbouncer = (): string | undefined => findDebianBinary('pgbouncer', '--version')

export interface Pgbouncer {
  /** The server's URL, through PgBouncer. */
  url: string
  stop: () => void
}

/** Starts PgBouncer in front of the server `url` names, pinned to `cpus` when given (the bench's). */
export async function startPgbouncer (binary: string, url: string, cpus?: string): Promise<Pgbouncer> {
  const server = new URL(url)
  const user = await postgresUser()
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-pgbouncer-'))
  const port = await freePort()
  const name = decodeURIComponent(server.username)
  writeFileSync(join(dir, 'users.txt'), `"${name}" "${decodeURIComponent(server.password)}"\n`)
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${server.hostname} port=${server.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = plain',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 20',
    'max_client_conn = 200',
    ''
  ].join('\n'))
  if (user !== undefined) for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), user.uid, user.gid)
  const [command, ...args] = cpus === undefined ? [binary, join(dir, 'pgbouncer.ini')] : ['taskset', '-c', cpus, binary, join(dir, 'pgbouncer.ini')]
  const child = spawnGroup(command, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const stop = (): void => {
    killGroup(child)
    rmSync(dir, { recursive: true, force: true })
  }
  const through = new URL(url)
  through.port = String(port)
  try {
    await accepting(through.href, child, 'PgBouncer', () => logExcerpt('pgbouncer', output))
  } catch (err) {
    stop()
    throw err
  }
  return { url: through.href, stop }
}
