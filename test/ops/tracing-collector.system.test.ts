import { readFileSync } from 'node:fs'
import t from 'tap'
import { freePort } from '../helpers/ports.ts'
import { startReceiver } from '../helpers/otlp-receiver.ts'
import { tracedService } from '../helpers/traced-service.ts'

// Traces when the collector fails: down, or hanging. The service as a real process, exporting to
// a receiver the test runs (test/ops/tracing.system.test.ts has what a trace holds).

/** `count` creates, 20 at a time; the milliseconds they took. */
async function timedCreates (create: () => Promise<Response>, count: number): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < count; i += 20) {
    const statuses = await Promise.all(Array.from({ length: Math.min(20, count - i) }, async () => (await create()).status))
    if (statuses.some((status) => status !== 200)) throw new Error(`a create answered ${statuses.join(', ')}`)
  }
  return performance.now() - started
}

t.test('a collector that is down or hangs changes nothing for clients; lost spans are counted, the queue bounded', async (t) => {
  const receiver = await startReceiver(t)
  const metricsPort = await freePort()
  const queue = 64
  const traced = await tracedService(t, receiver, { METRICS_PORT: String(metricsPort), OTEL_BSP_MAX_QUEUE_SIZE: String(queue), OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '32' })
  const up = await timedCreates(traced.create, 400)

  receiver.mode = 'hang'
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${traced.server.child.pid}/status`, 'utf8'))![1]) / 1024
  const before = rss()
  const hanging = await timedCreates(traced.create, 400)
  const flood = 2000
  await timedCreates(traced.create, flood)
  const grown = rss() - before

  const down = await tracedService(t, `http://127.0.0.1:${await freePort()}`, { OTEL_EXPORTER_OTLP_TIMEOUT: '200' })
  const refused = await timedCreates(down.create, 400)

  t.ok(hanging < up * 3 + 500, `a hung collector: 400 creates in ${hanging.toFixed(0)} ms, against ${up.toFixed(0)} ms with it up`)
  t.ok(refused < up * 3 + 500, `a collector that is down: ${refused.toFixed(0)} ms`)
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const lost = Number(/plant_store_trace_spans_lost_total\{reason="queue_full"\} (\d+)/.exec(metrics)?.[1] ?? 0)
  // Each create is a span, and the commits more: all but what the queue and the one export under
  // way hold are dropped, and counted.
  t.ok(lost >= 400 + flood - 2 * queue, `${lost} spans dropped and counted of at least ${400 + flood} while the collector hung`)
  t.ok(grown < 100, `the process grew ${grown.toFixed(1)} MiB over ${flood + 400} creates with the collector hung`)
})

t.test('SIGTERM with a hung collector: the process exits within SHUTDOWN_TIMEOUT_MS', async (t) => {
  const receiver = await startReceiver(t)
  receiver.mode = 'hang'
  const { server, create } = await tracedService(t, receiver, { SHUTDOWN_TIMEOUT_MS: '1500', OTEL_BSP_SCHEDULE_DELAY: '60000' })
  for (let i = 0; i < 10; i++) await create()
  const started = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'exit 0: the requests were drained, only the last spans are lost')
  const took = Date.now() - started
  // Unbounded, the exporter's own timeout (10 s) would hold the exit.
  t.ok(took < 1500 * 4, `exited ${took} ms after the signal`)
  t.ok(receiver.requests >= 1, 'after trying to flush')
  t.match(server.output().stdout, /did not take the last spans in time/)
})
