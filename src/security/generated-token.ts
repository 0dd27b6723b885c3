import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { tokenProblem } from './config.ts'
import { readSecretFile } from '../config/secret-file.ts'

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
  let text: string
  try {
    text = readSecretFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== undefined) throw err
    throw new Error(`${(err as Error).message}, or delete it to get a new token`)
  }
  const token = text.trim()
  const problem = tokenProblem(token)
  if (problem !== undefined) throw new Error(`${path} holds no usable token (it ${problem}); delete it to get a new one`)
  return token
}
