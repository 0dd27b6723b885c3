import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs'

// One rule for every file that holds secrets (the kept token, every <NAME>_FILE): a file that other
// users can read is refused, never used, at start and on every re-read. The mode is read from the
// very file that is then read (an open descriptor), so no swap in between goes unseen.

/** Why a secret file cannot be used, as both of its readers say it. */
export function openToOthers (path: string, mode: number): string {
  return `${path} is open to other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`
}

/** The file's text; throws, with the one message, when group or others may read or write it. */
export function readSecretFile (path: string): string {
  const fd = openSync(path, 'r')
  try {
    const { mode } = fstatSync(fd)
    if ((mode & 0o077) !== 0) throw new Error(openToOthers(path, mode))
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}
