import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// npm run test:times, on a folder of tap's results made here: the slowest files first, a failed
// one marked, each suite's sum (the everyday suite, the system suite, the image's), and nothing of
// a test file that is gone.
const script = fileURLToPath(new URL('../../scripts/test-times.ts', import.meta.url))

t.test('lists the slowest test files of the last runs, and each suite\'s sum', async (t) => {
  const ran = (seconds: number, failed = false) => `TAP version 14\n${failed ? 'not ok' : 'ok'} 1 - a test # time=${seconds * 1000}ms\n\n1..1\n# time=${seconds * 1000}ms\n`
  const cwd = t.testdir({
    test: { 'quick.test.ts': '', 'slow.test.ts': '', 'broken.test.ts': '', 'whole.system.test.ts': '', 'image.container-test.ts': '' },
    '.tap': {
      'test-results': {
        test: {
          'quick.test.ts.tap': ran(0.25),
          'slow.test.ts.tap': ran(12.5),
          'broken.test.ts.tap': ran(3, true),
          'whole.system.test.ts.tap': ran(40),
          'image.container-test.ts.tap': ran(1.5),
          'removed.test.ts.tap': ran(99)
        }
      }
    }
  })
  const listed = spawnSync(process.execPath, [script, '3'], { cwd, encoding: 'utf8' })
  t.equal(listed.status, 0, listed.stderr)
  t.same(listed.stdout.trim().split('\n').map((line) => line.replace(/\d\d:\d\d/, 'HH:MM')), [
    'The 3 slowest of 5 test files, as they last ran:',
    '   40.0 s  test/whole.system.test.ts  (system, HH:MM)',
    '   12.5 s  test/slow.test.ts  (everyday, HH:MM)',
    '    3.0 s  test/broken.test.ts  (everyday, HH:MM, FAILED)',
    'everyday: 3 files, 16 s in all (tap runs files side by side: the wall time is less)',
    'system: 1 file, 40 s in all (tap runs files side by side: the wall time is less)',
    'image: 1 file, 2 s in all (tap runs files side by side: the wall time is less)'
  ])

  const none = spawnSync(process.execPath, [script], { cwd: join(cwd, 'test'), encoding: 'utf8' })
  t.equal(none.status, 1, 'with no results, it says to run the tests')
  t.match(none.stderr, /run the tests first/)
})
