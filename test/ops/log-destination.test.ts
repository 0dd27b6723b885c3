import { openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { LOG_BUFFER_BYTES, logDestination } from '../../src/ops/log-destination.ts'

// The buffer itself, on a real file: what is written when. Each step below runs synchronously,
// so the second-long flush timer cannot run in between. The process test
// (log-flush.system.test.ts) kills a service every way and reads what reached its log.

function onFile (t: Test) {
  const path = join(t.testdir(), 'log')
  // Never closed: the flush timer (unref'd) keeps writing to it, as to standard output.
  const fd = openSync(path, 'w')
  const destination = logDestination(fd) as ReturnType<typeof logDestination> & { lastLevel: number }
  const write = (level: number, line: string): void => { destination.lastLevel = level; destination.write(line) }
  return { destination, write, written: () => readFileSync(path, 'utf8') }
}

t.test('info lines wait in the buffer until it holds LOG_BUFFER_BYTES, then go out in one write', async (t) => {
  const { write, written } = onFile(t)
  const line = `${JSON.stringify({ level: 30, msg: 'request', pad: 'x'.repeat(180) })}\n`
  let sent = 0
  while (sent + line.length < LOG_BUFFER_BYTES) { write(30, line); sent += line.length }
  t.equal(written(), '', `${sent} bytes of info lines are held`)
  write(30, line)
  t.equal(written(), line.repeat(sent / line.length + 1), 'the line that fills the buffer writes them all, in order')
})

t.test('a warning, or worse, is written at once with the lines before it', async (t) => {
  for (const level of [40, 50, 60]) {
    const { write, written } = onFile(t)
    write(30, '{"level":30,"msg":"request"}\n')
    t.equal(written(), '')
    write(level, `{"level":${level},"msg":"store connection failed"}\n`)
    t.equal(written(), `{"level":30,"msg":"request"}\n{"level":${level},"msg":"store connection failed"}\n`, `level ${level}`)
  }
})

t.test('flushSync writes what is held (the process calls it as it exits)', async (t) => {
  const { destination, write, written } = onFile(t)
  write(30, '{"level":30,"msg":"request"}\n')
  destination.flushSync()
  t.equal(written(), '{"level":30,"msg":"request"}\n')
})

t.test('a quiet second writes what is held', async (t) => {
  const { write, written } = onFile(t)
  write(30, '{"level":30,"msg":"request"}\n')
  const began = Date.now()
  while (written() === '' && Date.now() - began < 5000) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(written(), '{"level":30,"msg":"request"}\n')
})
