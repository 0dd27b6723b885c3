// npm run test:times [N]: the N slowest test files (15 by default) as they last ran, from what tap
// keeps of each file's output (.tap/test-results/), with each suite's sum: so that whoever slows
// the suite sees where before CI does. A file's time is its own, from start to end of its tests
// (the process's start, a few tenths of a second, is not in it). No test judges a time.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const RESULTS = '.tap/test-results'
const limit = Number(process.argv[2] ?? 15)

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.tap') ? [join(dir, entry.name)] : [])
}

let found: string[]
try {
  found = files(RESULTS)
} catch {
  console.error(`No ${RESULTS}/ here: run the tests first (npm test, npm run test:system).`)
  process.exit(1)
}

// A file's output outlives the file: only the tests that are still here.
const runs = found.filter((file) => existsSync(relative(RESULTS, file).replace(/\.tap$/, ''))).map((file) => {
  const output = readFileSync(file, 'utf8')
  const time = [...output.matchAll(/^# time=([\d.]+)ms$/gm)].at(-1)?.[1]
  return {
    test: relative(RESULTS, file).replace(/\.tap$/, ''),
    seconds: time === undefined ? undefined : Number(time) / 1000,
    failed: /^not ok /m.test(output),
    when: statSync(file).mtime
  }
})

const suite = (test: string): string => test.endsWith('.system.test.ts') ? 'system' : test.endsWith('.container-test.ts') ? 'image' : 'everyday'
const format = (seconds: number | undefined): string => seconds === undefined ? '   (unfinished)' : `${seconds.toFixed(1).padStart(7)} s`
const timeOfDay = (date: Date): string => date.toTimeString().slice(0, 5)

const slowest = [...runs].sort((a, b) => (b.seconds ?? Infinity) - (a.seconds ?? Infinity)).slice(0, limit)
console.log(`The ${slowest.length} slowest of ${runs.length} test files, as they last ran:`)
for (const run of slowest) console.log(`${format(run.seconds)}  ${run.test}  (${suite(run.test)}, ${timeOfDay(run.when)}${run.failed ? ', FAILED' : ''})`)
for (const name of ['everyday', 'system', 'image']) {
  const own = runs.filter((run) => suite(run.test) === name)
  if (own.length === 0) continue
  const sum = own.reduce((total, run) => total + (run.seconds ?? 0), 0)
  console.log(`${name}: ${own.length} file${own.length === 1 ? '' : 's'}, ${sum.toFixed(0)} s in all (tap runs files side by side: the wall time is less)`)
}
