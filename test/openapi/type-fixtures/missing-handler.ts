import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

// @ts-expect-error getThing's handler is missing
export const handlers: HandlersOf<operations> = {
  createThing: async ({ body }) => ({ status: 200, body: { name: body.name } })
}
