import type { FastifyInstance } from 'fastify'
import { StoreTimeoutError, StoreUnavailableError } from '../errors.js'
import type { PlantStore } from '../store/store.js'

// How long /readyz waits for the store. A stuck disk or database makes the instance unready
// within this, so a load balancer drains it (probes usually time out after 1 s).
const READY_TIMEOUT_MS = 1000

/** Public probes: /healthz says the process is alive, /readyz that the store answers promptly. */
export async function health (app: FastifyInstance, { store }: { store: PlantStore }): Promise<void> {
  // Served by the event loop alone, which no store wait can hold.
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (request) => {
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        store.ping(),
        new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new StoreTimeoutError()), READY_TIMEOUT_MS) })
      ])
    } catch (err) {
      request.log.warn({ err }, 'store is not ready')
      throw new StoreUnavailableError()
    } finally {
      clearTimeout(timer)
    }
    return { status: 'ok' }
  })
}
