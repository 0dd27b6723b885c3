import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { tokenProblem } from '../config.js'

// With no tokens configured, the service makes one, so that `npm start` works out of the box.
// It is kept in a file beside the database and reused, so that a restart (`npm run dev`
// restarts on every save) does not invalidate the token in Swagger UI and in curl commands.

export interface KeptToken {
  token: string
  /** True when this start made the token; false when it was read from the file. */
  created: boolean
}

/** The token kept at `path`: read when the file exists, else made and written with mode 0600. */
export function keptToken (path: string): KeptToken {
  try {
    return { token: readKept(path), created: false }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const token = randomBytes(32).toString('base64url')
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  let fd: number
  try {
    fd = openSync(path, 'wx', 0o600) // never over a file another start has just written
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { token: readKept(path), created: false }
    throw err
  }
  try {
    writeSync(fd, `${token}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return { token, created: true }
}

/** Refuses, rather than replaces, a file others can read or one that holds no usable token. */
function readKept (path: string): string {
  const { mode } = statSync(path)
  if ((mode & 0o077) !== 0) {
    throw new Error(`${path} is open to other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it, or delete it to get a new token`)
  }
  const token = readFileSync(path, 'utf8').trim()
  const problem = tokenProblem(token)
  if (problem !== undefined) throw new Error(`${path} holds no usable token (it ${problem}); delete it to get a new one`)
  return token
}
