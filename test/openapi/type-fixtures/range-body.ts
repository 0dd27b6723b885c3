import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './answers.js'

export const handlers: HandlersOf<operations> = {
  listPets: async () => ({ status: 200, body: [] }),
  // @ts-expect-error 404 has its own answer, { missing }: 4XX stands for the rest of 400–499
  removePet: async () => ({ status: 404, body: { code: 404, message: 'none' } })
}
