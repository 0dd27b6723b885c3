import { statSync, watch, type FSWatcher } from 'node:fs'
import { dirname } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import type { TokenSet } from './tokens.ts'

// API_TOKENS_FILE followed as it changes, so that a rotated token reaches every replica without a
// restart or a signal. Kubernetes updates a mounted Secret by writing its files into a new
// directory beside the old and swapping the `..data` symlink to it, in one rename; a person or a
// script writes the file in place, or renames a new one over it. Each of these changes an entry of
// the file's directory, which is watched; a poll of the file's identity (device, inode, size,
// times) catches what a watch misses (a file system that sends no events). What is read then
// passes the checks it passed at start, or is refused: the tokens in force stay, the log says why,
// and the metric says so until a file that passes comes. SIGHUP reloads the same way.

/** How often the file's identity is compared, whatever the watch says. */
export const POLL_MS = 2000
// A change seen by the watch is read a moment later, once a write in several parts has ended.
const SETTLE_MS = 100

/** Told of each reload: whether its file was taken. */
export type TokensFileObserver = (taken: boolean) => void

export interface TokensFile {
  path: string
  /** The tokens the file holds, checked as at start; throws, saying why, when it fails the checks. */
  read: () => string[]
}

export interface FollowedTokens {
  /** Reads the file again now (SIGHUP), whether or not it changed. */
  reload: (reason: string) => void
  close: () => void
}

/** What identifies the file's content as it is now: another string once it is swapped, rewritten or changed in mode. */
function identity (path: string): string {
  try {
    const { dev, ino, size, mtimeMs, ctimeMs } = statSync(path)
    return `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'unreadable'
  }
}

/** Follows the file: each change is read and, when it passes, replaces the tokens. */
export function followTokensFile ({ path, read }: TokensFile, tokens: TokenSet, log: FastifyBaseLogger, observe: TokensFileObserver = () => {}): FollowedTokens {
  let seen = identity(path)
  let settle: NodeJS.Timeout | undefined

  const reload = (reason: string): void => {
    seen = identity(path)
    try {
      const taken = read()
      tokens.replace(taken)
      log.info({ reason, count: taken.length }, 'API tokens reloaded')
      observe(true)
    } catch (err) {
      log.error({ reason, problem: (err as Error).message }, 'API tokens not reloaded; the ones in force stay')
      observe(false)
    }
  }
  const check = (reason: string): void => {
    if (identity(path) !== seen) reload(reason)
  }
  const poll = setInterval(() => check('poll'), POLL_MS).unref()
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(dirname(path), { persistent: false }, () => {
      clearTimeout(settle)
      settle = setTimeout(() => check('change'), SETTLE_MS).unref()
    })
    // A directory that goes away ends its watch; the poll goes on.
    watcher.on('error', () => watcher?.close())
  } catch {
    // No watch here (no such directory, no inotify): the poll alone.
  }
  return {
    reload,
    close: () => {
      clearInterval(poll)
      clearTimeout(settle)
      watcher?.close()
    }
  }
}
