// The copy section of npm run bench: npm run copy-store from a SQLite store of a million plants
// into the embedded PostgreSQL, the command on the server's core and PostgreSQL on the other.
// Two rates: plants written per second (the copy), and plants checked per second (the check after
// it, which reads the target back); the peak RSS is the command's high-water mark. The command is
// the npm script's own, Node's flags included.
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { bulkSqliteStore } from '../../test/helpers/bulk-store.ts'
import { startEmbeddedPostgres } from '../../test/helpers/embedded-postgres.ts'
import { nodeCommandOf } from '../../test/helpers/npm-script.ts'
import { CPUS, fmt, peakRssMiB, pinned, root } from './measure.ts'

const PLANTS = 1_000_000
const SCRIPT = nodeCommandOf(root, 'copy-store')

export async function benchCopy ({ dir }: { dir: string }): Promise<string> {
  mkdirSync(dir, { recursive: true })
  const source = join(dir, 'copy-source.db')
  process.stderr.write(`copy: making a SQLite store of ${fmt(PLANTS)} plants\n`)
  // Ids spread over the int64 range, names and tags of a realistic size.
  bulkSqliteStore(source, PLANTS, (i) => ({ id: BigInt(i) * 9_223_372_036_853n - 4_611_686_018_427n, name: `Plant number ${i}, a Boston fern 🌿`, ...(i % 3 !== 0 && { tag: 'indoor' }) }))
  const pg = await startEmbeddedPostgres({ cpus: CPUS.load })
  try {
    process.stderr.write('copy: SQLite to PostgreSQL\n')
    const began = performance.now()
    const [command, ...args] = pinned(CPUS.server, [process.execPath, ...SCRIPT.args, `sqlite:${source}`, pg.url])
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...SCRIPT.env }, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    // taskset execs Node in its own process: the pid is the command's. VmHWM is a high-water
    // mark, so the last reading before the exit is the peak.
    let peak = 0
    while (child.exitCode === null) {
      // A process exiting (a zombie) has no VmHWM left to read.
      try { peak = Math.max(peak, peakRssMiB(child.pid!) || 0) } catch {}
      await sleep(50)
    }
    const code = await exited
    const wall = (performance.now() - began) / 1000
    if (code !== 0) throw new Error(`copy-store exited ${code}: ${stdout}`)
    const seconds = Number(/ in ([\d.]+) s\n/.exec(stdout)?.[1])
    const checkSeconds = Number(/^check: .*, in ([\d.]+) s$/m.exec(stdout)?.[1])
    const copied = Number(/ ([\d,]+) copied/.exec(stdout)?.[1].replaceAll(',', ''))
    return [
      '### Copying a store: SQLite to PostgreSQL',
      '',
      `\`npm run copy-store\` (\`node ${SCRIPT.args.map((arg) => arg.startsWith(root) ? relative(root, arg) : arg).join(' ')}\`) on core ${CPUS.server}, from a SQLite file of ${fmt(PLANTS)} plants into an empty embedded PostgreSQL on core(s) ${CPUS.load} (fsync on, synchronous_commit=on). The copy's own report:`,
      '',
      '```',
      stdout.trim(),
      '```',
      '',
      '| plants | copy s | copied/s | check s | checked/s | the whole command s | peak RSS MiB |',
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      `| ${fmt(copied)} | ${fmt(seconds, 1)} | ${fmt(copied / seconds)} | ${fmt(checkSeconds, 1)} | ${fmt(copied / checkSeconds)} | ${fmt(wall, 1)} | ${fmt(peak, 1)} |`,
      ''
    ].join('\n')
  } finally {
    await pg.destroy()
  }
}
