import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import t from 'tap'
import { killGroup, spawnGroup } from './children.js'
import { freePort, postgresUser } from './embedded-postgres.js'
import { logExcerpt } from './log-file.js'

// Debian's PgBouncer in front of a test's PostgreSQL, in transaction pooling, as platforms run it:
// each transaction gets any server connection, and startup options are refused. It runs as the
// server's user (PgBouncer will not run as root), on 127.0.0.1 and a free port.

const READY_TIMEOUT_MS = 30_000

/** The pgbouncer binary, or undefined where Debian's package is not installed. */
export function findPgbouncer (): string | undefined {
  for (const path of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    try {
      execFileSync(path, ['--version'], { stdio: 'ignore' })
      return path
    } catch {}
  }
  return undefined
}

/** Starts PgBouncer in front of the server `url` names; answers the same URL through it. Stopped when the file ends. */
export async function startPgbouncer (binary: string, url: string): Promise<string> {
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
    'default_pool_size = 4',
    'max_client_conn = 200',
    ''
  ].join('\n'))
  if (user !== undefined) for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), user.uid, user.gid)
  const child = spawnGroup(binary, [join(dir, 'pgbouncer.ini')], { ...user, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  t.teardown(() => {
    killGroup(child)
    rmSync(dir, { recursive: true, force: true })
  })
  const through = new URL(url)
  through.port = String(port)
  const accepts = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: through.href })
    client.on('error', () => {})
    const connected = await client.connect().then(() => true, () => false)
    await client.end().catch(() => {})
    return connected
  }
  for (const deadline = Date.now() + READY_TIMEOUT_MS; !await accepts(); await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`PgBouncer exited (${child.exitCode}): ${logExcerpt('pgbouncer', output)}`)
    if (Date.now() > deadline) throw new Error(`PgBouncer did not start: ${logExcerpt('pgbouncer', output)}`)
  }
  return through.href
}
