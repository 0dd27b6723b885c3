import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

export const handlers: HandlersOf<operations> = {
  createThing: async ({ body }) => ({ status: 200, body: { name: body.name } }),
  // @ts-expect-error the path parameter is id, not name
  getThing: async ({ params }) => ({ status: 200, body: { name: params.name } })
}
