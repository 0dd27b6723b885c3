import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './answers.js'

export const handlers: HandlersOf<operations> = {
  listPets: async () => ({ status: 200, body: [] }),
  // @ts-expect-error 503 is in no range removePet declares (204, 404, 4XX)
  removePet: async () => ({ status: 503, body: { code: 503, message: 'busy' } })
}
