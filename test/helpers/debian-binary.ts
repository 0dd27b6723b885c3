import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

/** A Debian package's program, in /usr/sbin or /usr/bin, that runs (`check`, its version, answers); undefined where the package is not installed. */
export function findDebianBinary (name: string, check: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin']) {
    try {
      execFileSync(join(dir, name), [check], { stdio: 'ignore' })
      return join(dir, name)
    } catch {}
  }
  return undefined
}
