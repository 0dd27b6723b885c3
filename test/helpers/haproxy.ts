import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { killGroup, spawnGroup } from './children.ts'
import { findDebianBinary } from './debian-binary.ts'
import { freePort } from './ports.ts'
import { listeningOn } from './listening.ts'

// Debian's HAProxy in front of a test's replicas, as a load balancer spreads a Service's load:
// HTTP mode, each request to the next replica in turn (round robin), on 127.0.0.1 and a free port.

/** HAProxy's binary, or undefined where Debian's package is not installed (npm test's pretest installs it). */
export const findHaproxy = (): string | undefined => findDebianBinary('haproxy', '-v')

/** Starts HAProxy balancing over `backends` (host:port each); its URL. */
export async function startHaproxy (t: Test, binary: string, backends: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-haproxy-'))
  const port = await freePort()
  writeFileSync(join(dir, 'haproxy.cfg'), [
    'global',
    '  maxconn 1024',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    ...backends.map((backend, i) => `  server replica${i} ${backend}`),
    ''
  ].join('\n'))
  const child = spawnGroup(binary, ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' })
  t.teardown(() => {
    killGroup(child)
    rmSync(dir, { recursive: true, force: true })
  })
  await listeningOn(port, child, 'haproxy')
  return `http://127.0.0.1:${port}`
}
