import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs'

// One rule for every file that holds secrets (the kept token, every <NAME>_FILE): a file that other
// users can read is refused, never used, at start and on every re-read. The mode is read from the
// very file that is then read (an open descriptor), so no swap in between goes unseen.
// One shape is no other user's: a file of root's that only the service's own group may read
// (0440 or 0400), as Kubernetes mounts a Secret for a pod's fsGroup; a non-root service can read a
// Secret no other way, since Kubernetes gives its files to root.

/** Why a secret file cannot be used, as both of its readers say it. */
export function openToOthers (path: string, mode: number): string {
  return `${path} is open to other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`
}

/** May someone other than this process's user read or write it? */
function openTo (mode: number, owner: number, group: number): boolean {
  const orchestrated = owner === 0 && group === process.getgid?.() && process.getuid?.() !== 0
  return orchestrated ? (mode & 0o037) !== 0 : (mode & 0o077) !== 0
}

/** The file's text; throws, with the one message, when another user may read or write it. */
export function readSecretFile (path: string): string {
  const fd = openSync(path, 'r')
  try {
    const { mode, uid, gid } = fstatSync(fd)
    if (openTo(mode, uid, gid)) throw new Error(openToOthers(path, mode))
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}
