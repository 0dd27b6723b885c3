import type { FastifyInstance } from 'fastify'
import { StoreUnavailableError } from './errors.js'
import type { PlantStore } from './store/store.js'

/** Public probes: /healthz says the process is alive, /readyz that the store answers. */
export async function health (app: FastifyInstance, { store }: { store: PlantStore }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (request) => {
    try {
      await store.ping()
    } catch (err) {
      request.log.warn({ err }, 'store is not ready')
      throw new StoreUnavailableError()
    }
    return { status: 'ok' }
  })
}
