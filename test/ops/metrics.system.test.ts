import { createServer } from 'node:net'
import t from 'tap'
import { freePort } from '../helpers/ports.ts'
import { postPlant, startServer } from '../helpers/server-process.ts'

// The metrics listener of the service as a process (the in-process counts: metrics.test.ts).

t.test('the service process: the listener starts and stops with it; a taken port stops the start', async (t) => {
  const port = await freePort()
  const token = 'metrics-process-token-0123456789'
  const server = startServer(t, { API_TOKENS: token, METRICS_PORT: String(port) })
  const { url } = await server.listening
  t.match(server.output().stdout, `Metrics: http://127.0.0.1:${port}/metrics`)
  await (await postPlant(url, token, '{"id":1,"name":"Fern"}')).arrayBuffer()
  t.match(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'plant_store_creates_total{outcome="created"} 1')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0)
  await t.rejects(fetch(`http://127.0.0.1:${port}/metrics`), 'closed with the service')

  const plain = startServer(t, { API_TOKENS: token })
  await plain.listening
  t.notMatch(plain.output().stdout, 'Metrics:', 'unset: no metrics listener announced')
  plain.child.kill('SIGTERM')
  await plain.exited

  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve))
  t.teardown(() => taken.close())
  const refused = startServer(t, { API_TOKENS: token, METRICS_PORT: String(port) })
  t.equal(await refused.exited, 1)
  t.match(refused.output().stderr, new RegExp(`^Plant Store cannot start: the metrics listener cannot start on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE[^\\n]*\\n$`))
})
