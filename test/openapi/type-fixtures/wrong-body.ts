import type { Handlers } from '../../../src/openapi/handler-types.js'

export const handlers: Handlers = {
  createPlant: async ({ body }) => ({ status: 200, body: { title: body.name } })
}
