import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// A failure's message stays short: what a process printed goes to a file under .tap/logs/, and
// the message names it with the output's last lines.
const LOGS = fileURLToPath(new URL('../../.tap/logs/', import.meta.url))
const TAIL_CHARS = 300
let next = 0

/** Keeps `text` in a log file; answers its last few hundred characters and the file's path. */
export function logExcerpt (what: string, text: string): string {
  mkdirSync(LOGS, { recursive: true })
  const file = join(LOGS, `${what.replace(/[^\w.-]+/g, '-')}-${process.pid}-${next++}.log`)
  writeFileSync(file, text)
  const tail = text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text
  return `${tail.trim()} (all of it in ${file})`
}
