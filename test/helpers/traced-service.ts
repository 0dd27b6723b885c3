import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'
import type { Receiver } from './otlp-receiver.ts'
import { startServer } from './server-process.ts'

// The service as the tracing tests run it: a real process, configured by the SDK's own OTEL_*
// variables, exporting over OTLP/HTTP to a receiver the test runs.

export const TOKEN = 'tracing-token-0123456789abc'
// The name each create sends: it must appear in no span.
export const SECRET_NAME = 'a name only the body holds 7f1c'

/** A service exporting to `receiver` (OTLP/JSON, so the test reads it), batches every 100 ms. */
export async function tracedService (t: Test, receiver: Receiver | string, env: Record<string, string> = {}) {
  const server = startServer(t, {
    API_TOKENS: TOKEN,
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: typeof receiver === 'string' ? receiver : receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    ...env
  })
  const { url } = await server.listening
  let nextId = 1
  const create = async (headers: Record<string, string> = {}, body?: string) => {
    const res = await fetch(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body: body ?? JSON.stringify({ id: nextId++, name: SECRET_NAME })
    })
    await res.arrayBuffer()
    return res
  }
  /**
   * The access lines the service wrote, once there are `count`: info lines are buffered and
   * reach the log within a second (ops/log-destination.ts). Bounded: past 10 s, those there are.
   */
  const accessLines = async (count: number) => {
    const written = () => server.output().stdout.split('\n').filter((line) => line.includes('"msg":"request"')).map((line) => JSON.parse(line))
    for (const began = Date.now(); written().length < count && Date.now() - began < 10_000;) await sleep(50)
    return written()
  }
  return { server, url, create, accessLines }
}
