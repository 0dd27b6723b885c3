import pino from 'pino'

// Where the process's log lines go: standard output, through pino's destination (sonic-boom)
// with a buffer, so the access lines cost one write(2) per buffer instead of one per line. The
// writes stay synchronous, as pino's default is: a line is either in the buffer or handed to the
// OS, never in flight on another thread, so what an exit has not flushed is the buffer alone.
// Warnings and worse are written at once, and a timer writes what waits once a second; every exit
// the process takes (a signal's drain, process.exit, an uncaught exception) flushes the rest.
// Only a SIGKILL or a power cut loses lines: at most the buffer, LOG_BUFFER_BYTES.

/** Bytes of lines held before a write: about 20 access lines. */
export const LOG_BUFFER_BYTES = 4096
const FLUSH_INTERVAL_MS = 1000
// pino's numeric level of warn.
const WARN = 40
// A stream with this symbol set is told each line's level before the line (pino's multistream uses it).
const NEEDS_METADATA = Symbol.for('pino.metadata')

export interface LogDestination {
  write: (line: string) => void
  /** Writes what is buffered, synchronously. */
  flushSync: () => void
}

/** A descriptor (standard output by default), buffered; the process flushes it as it exits (server.ts). */
export function logDestination (fd = 1): LogDestination {
  const boom = pino.destination({ dest: fd, sync: true, minLength: LOG_BUFFER_BYTES, periodicFlush: FLUSH_INTERVAL_MS })
  const destination = {
    [NEEDS_METADATA]: true,
    /** Set by pino before each write. */
    lastLevel: 0,
    write (line: string): void {
      boom.write(line)
      // flush(), not flushSync(): the latter also fsyncs, a cost a burst of 503s would pay per line.
      if (destination.lastLevel >= WARN) boom.flush()
    },
    flushSync: () => { boom.flushSync() }
  }
  return destination
}
