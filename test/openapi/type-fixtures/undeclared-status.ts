import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

export const handlers: HandlersOf<operations> = {
  // @ts-expect-error 418 is no status the document declares
  createThing: async () => ({ status: 418, body: { error: 418, message: 'I am a teapot' } }),
  getThing: async () => ({ status: 200, body: { name: 'found' } })
}
