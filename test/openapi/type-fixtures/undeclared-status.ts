import type { Handlers } from '../../../src/openapi/handler-types.js'

export const handlers: Handlers = {
  createPlant: async () => ({ status: 418, body: { error: 418, message: 'I am a teapot' } })
}
