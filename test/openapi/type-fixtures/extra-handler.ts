import type { Handlers } from '../../../src/openapi/handler-types.js'

export const handlers: Handlers = {
  createPlant: async ({ body }) => ({ status: 200, body: { name: body.name } }),
  deletePlant: async () => ({ status: 200, body: { name: 'gone' } })
}
