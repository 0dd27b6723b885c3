// The recovery section of npm run bench: after PostgreSQL crashes and comes back, how soon the
// service acknowledges creates again. PostgreSQL (syncing, on the load's cores) takes creates from
// 16 clients through the service (npm start, on its core); each round kills every PostgreSQL
// process at once (SIGKILL, no shutdown), restarts it (crash recovery), and times, from the moment
// it accepts connections again, the first create the service acknowledges. The service is never
// restarted: its pool comes back by itself. The power-loss test does the same on LazyFS.
import { setTimeout as sleep } from 'node:timers/promises'
import { startEmbeddedPostgres } from '../../test/helpers/embedded-postgres.ts'
import { createLog, createUntil } from '../../test/helpers/durability.ts'
import { CPUS, fmt, median, type Server } from './measure.ts'

const CRASHES_PER_ROUND = 10
// Creates taken between two crashes, so each cut comes with commits under way.
const BETWEEN_CRASHES_MS = 300
// A round that waits longer than this for an acknowledgement has found a service that does not come back.
const BACK_WITHIN_MS = 60_000

export async function benchRecovery ({ rounds, token, service }: { rounds: number, token: string, service: (env: Record<string, string>) => (name: string) => Promise<Server> }): Promise<string> {
  const restartMs: number[] = []
  const backMs: number[] = []
  const statuses = new Map<number, number>()
  for (let round = 1; round <= rounds; round++) {
    const pg = await startEmbeddedPostgres({ cpus: CPUS.load })
    const server = await service({ DATABASE_URL: pg.url, LOG_LEVEL: 'fatal', PG_POOL_SIZE: '4' })('recovery')
    try {
      const log = createLog()
      for (let crash = 0; crash <= CRASHES_PER_ROUND; crash++) {
        process.stderr.write(`recovery: round ${round}/${rounds}, crash ${crash}/${CRASHES_PER_ROUND}\n`)
        const run = { stop: false }
        const load = createUntil(server.url, token, log, () => run.stop)
        const acked = log.acked.size
        const began = performance.now()
        while (log.acked.size === acked) {
          if (performance.now() - began > BACK_WITHIN_MS) throw new Error(`no create acknowledged ${BACK_WITHIN_MS} ms after PostgreSQL came back`)
          await sleep(1)
        }
        if (crash > 0) backMs.push(performance.now() - began)
        if (crash === CRASHES_PER_ROUND) {
          run.stop = true
          await load
          break
        }
        await sleep(BETWEEN_CRASHES_MS)
        await pg.kill()
        run.stop = true
        await load
        const restarting = performance.now()
        await pg.start()
        restartMs.push(performance.now() - restarting)
      }
      for (const [status, count] of log.statuses) statuses.set(status, (statuses.get(status) ?? 0) + count)
    } finally {
      server.child.kill('SIGTERM')
      await pg.destroy()
    }
  }
  const describe = (values: number[]): string => `${fmt(median(values))} ms (max ${fmt(Math.max(...values))})`
  return [
    '### Recovery after a PostgreSQL crash',
    '',
    `${backMs.length} crashes (${rounds} rounds of ${CRASHES_PER_ROUND}): every PostgreSQL process SIGKILLed under 16 clients' creates, then restarted; the service never restarted. Median (max).`,
    '',
    '| PostgreSQL\'s restart, crash recovery included, to its first connection | the service\'s first acknowledged create after that | answers, by status |',
    '| ---: | ---: | --- |',
    `| ${describe(restartMs)} | ${describe(backMs)} | ${[...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${fmt(count)}`).join(', ')} |`,
    ''
  ].join('\n')
}
