// npm run copy-store -- <from> <to>: copies a live store into another, as DATABASE_URL names them
// (sqlite:<path> or postgres://…): a backup, the move to PostgreSQL, a restore (store/copy.ts).
// Exit 0: copied and checked; 1: conflicts, refused plants, a failed check or a failed target;
// 2: input it cannot start from, with nothing written.
import { CopyInputError, copyStore, LISTED, type CopyOptions, type CopyResult } from '../store/copy.ts'

const USAGE = 'usage: npm run copy-store -- <from> <to>   (each sqlite:<path> or postgres://user:password@host:port/database)'
// How often the progress is told: in place on a terminal, as lines in a log.
const TERMINAL_EVERY_MS = 200
const LOG_EVERY_MS = 5000

const count = (n: number): string => n.toLocaleString('en-US')

/** The progress line of each phase: plants done, rate and time left. On a terminal it is rewritten in place. */
function progress (stream: NodeJS.WriteStream): { tell: NonNullable<CopyOptions['onProgress']>, end: () => void } {
  const every = stream.isTTY ? TERMINAL_EVERY_MS : LOG_EVERY_MS
  let phase: string | undefined
  let started = performance.now() // a phase starts when the one before it ended
  let told = started
  let printed = -Infinity
  let shown = false
  const end = (): void => {
    if (shown && stream.isTTY) stream.write('\n')
    shown = false
  }
  return {
    tell (now, done, total) {
      const at = performance.now()
      if (now !== phase) {
        end()
        phase = now
        started = told
        printed = -Infinity
      }
      told = at
      if (at - printed < every && done < total) return
      printed = at
      const rate = done / ((at - started) / 1000)
      const line = `${now} ${count(done)} of ${count(total)} plants (${Math.floor(done / Math.max(total, 1) * 100)}%), ${count(Math.round(rate))}/s, about ${Math.ceil((total - done) / rate)} s left`
      stream.write(stream.isTTY ? `\r\x1b[K${line}` : `${line}\n`)
      shown = true
    },
    end
  }
}

function summary (result: CopyResult): { lines: string[], ok: boolean } {
  const { total, copied, skipped, conflicts, refused, seconds, check } = result
  const matches = check.source.count === check.target.count && check.source.sum === check.target.sum
  const lines = [`${count(total)} plants in the snapshot: ${count(copied)} copied, ${count(skipped)} already there (skipped), ${count(conflicts.count)} conflicts, ${count(refused.count)} refused, in ${seconds.toFixed(1)} s`]
  if (conflicts.count > 0) {
    lines.push(`conflicts: the target holds a different plant under ${conflicts.count} id(s), kept as it was: ${conflicts.ids.join(', ')}${conflicts.count > LISTED ? ', …' : ''}`)
  }
  for (const { id, message } of refused.examples) lines.push(`refused: plant ${id}: ${message}`)
  const tally = (t: CopyResult['check']['source']) => `${count(t.count)} plants, checksum ${t.sum.toString(16).padStart(16, '0')}`
  lines.push(matches
    ? `check: the target holds the snapshot exactly (${tally(check.source)}), in ${check.seconds.toFixed(1)} s`
    : `check FAILED: the snapshot has ${tally(check.source)}; the target has ${tally(check.target)} under the same ids`)
  return { lines, ok: matches && conflicts.count === 0 && refused.count === 0 }
}

const args = process.argv.slice(2)
if (args.length !== 2) {
  console.error(USAGE)
  process.exit(2)
}
const shown = progress(process.stderr)
try {
  const result = await copyStore(args[0], args[1], { onProgress: shown.tell })
  shown.end()
  const { lines, ok } = summary(result)
  console.log(lines.join('\n'))
  process.exitCode = ok ? 0 : 1
} catch (err) {
  shown.end()
  console.error(`copy-store: ${(err as Error).message}`)
  process.exitCode = err instanceof CopyInputError ? 2 : 1
}
