import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

export const handlers: HandlersOf<operations> = {
  createThing: async ({ body }) => ({ status: 200, body: { name: body.name } }),
  getThing: async () => ({ status: 200, body: { name: 'found' } }),
  // @ts-expect-error no operation deleteThing in the document
  deleteThing: async () => ({ status: 200, body: { name: 'gone' } })
}
