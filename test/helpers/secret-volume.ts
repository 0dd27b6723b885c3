import { mkdirSync, mkdtempSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

// A Secret's volume as the kubelet lays it out and updates it (its atomic writer): the files in a
// directory named for the time, `..data` a symlink to that directory, and each file's name a
// symlink into `..data`. An update writes a new directory, points `..data_tmp` at it, renames
// that over `..data` (one atomic step) and removes the old directory.

let generation = 0

/** A directory for a test's secrets, removed with it (a test's own is laid anew by each testdir() call, a database's among them). */
export function secretDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-secrets-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Writes `files` as the Secret's new content, as the kubelet would: the first call lays the volume out. */
export function updateSecretVolume (dir: string, files: Record<string, string>, mode = 0o600): void {
  const data = join(dir, '..data')
  let old: string | undefined
  try { old = readlinkSync(data) } catch {}
  const fresh = `..${new Date().toISOString().replace(/[-:.TZ]/g, '_')}${++generation}`
  mkdirSync(join(dir, fresh))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, fresh, name), text, { mode })
  symlinkSync(fresh, join(dir, '..data_tmp'))
  renameSync(join(dir, '..data_tmp'), data)
  for (const name of Object.keys(files)) {
    try { symlinkSync(join('..data', name), join(dir, name)) } catch {}
  }
  if (old !== undefined) rmSync(join(dir, old), { recursive: true, force: true })
}
