// The mock section of npm run bench: `npm run mock` on the biggest description at hand, GitHub's
// REST API (13 MB, 1,223 operations, OpenAPI 3.0.3), beside Stoplight's Prism on the same file,
// alternating starts. For each: the time from spawn to the first answer, the memory then, and the
// peak over the next SETTLE_MS (ours checks every example meanwhile). Nothing pinned: a mock is a
// developer's process on a developer's machine.
import { setTimeout as sleep } from 'node:timers/promises'
import { GITHUB, install, start, stop } from '../corpus/mocks.ts'
import { fmt, median } from './measure.ts'

const SETTLE_MS = 20_000
const MOCKS = ['ours', 'prism']

const range = (values: number[], digits = 0): string => `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`

export async function benchMock ({ rounds }: { rounds: number }): Promise<string> {
  install()
  const figures = Object.fromEntries(MOCKS.map((name) => [name, { firstMs: [] as number[], atFirstMiB: [] as number[], peakMiB: [] as number[] }]))
  for (let round = 1; round <= rounds; round++) {
    for (const name of round % 2 === 0 ? [...MOCKS].reverse() : MOCKS) {
      process.stderr.write(`mock: round ${round}/${rounds}, ${name}\n`)
      const mock = await start(name, GITHUB, '/')
      if (mock === undefined) throw new Error(`${name} did not start on GitHub's description`)
      try {
        figures[name].firstMs.push(mock.bootMs)
        figures[name].atFirstMiB.push(mock.peakMiB())
        await sleep(SETTLE_MS)
        figures[name].peakMiB.push(mock.peakMiB())
      } finally {
        await stop(mock)
      }
    }
  }
  return [
    '### The mock: GitHub\'s description, against Prism',
    '',
    `GitHub's REST description (@octokit/openapi, 13 MB, 1,223 operations, OpenAPI 3.0.3), ${rounds} alternating starts of each mock, nothing pinned; median (range). Ours runs as \`npm run mock\` runs it; Prism as \`prism mock\`.`,
    '',
    `| mock | spawn to first answer, ms | peak RSS at the first answer, MiB | peak RSS in the next ${SETTLE_MS / 1000} s, MiB |`,
    '| --- | ---: | ---: | ---: |',
    ...MOCKS.map((name) => `| ${name} | ${range(figures[name].firstMs)} | ${range(figures[name].atFirstMiB)} | ${range(figures[name].peakMiB)} |`),
    ''
  ].join('\n')
}
