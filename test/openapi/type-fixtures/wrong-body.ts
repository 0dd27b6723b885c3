import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

export const handlers: HandlersOf<operations> = {
  // @ts-expect-error the 200 body is a Thing, which has no title
  createThing: async ({ body }) => ({ status: 200, body: { title: body.name } }),
  getThing: async () => ({ status: 200, body: { name: 'found' } })
}
