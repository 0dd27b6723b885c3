import type { FastifyInstance } from 'fastify'
import { StoreUnavailableError } from '../errors.ts'
import { withDeadline } from '../store/deadline.ts'
import type { PlantStore } from '../store/store.ts'

// How long /readyz waits for the store. A stuck disk or database makes the instance unready
// within this, so a load balancer drains it (probes usually time out after 1 s).
const READY_TIMEOUT_MS = 1000

/** Public probes: /healthz says the process is alive, /readyz that the store answers promptly. */
export async function health (app: FastifyInstance, { store }: { store: PlantStore }): Promise<void> {
  // Served by the event loop alone, which no store wait can hold.
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (request) => {
    try {
      await withDeadline(store.ping(), READY_TIMEOUT_MS)
    } catch (err) {
      request.log.warn({ err }, 'store is not ready')
      throw new StoreUnavailableError()
    }
    return { status: 'ok' }
  })
}
