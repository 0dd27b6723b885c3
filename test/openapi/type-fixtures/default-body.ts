import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './answers.js'

export const handlers: HandlersOf<operations> = {
  // @ts-expect-error 200 has its own answer, a list of pets: default stands for the statuses no other key takes
  listPets: async () => ({ status: 200, body: { code: 200, message: 'fine' } }),
  removePet: async () => ({ status: 409, body: { code: 409, message: 'in use' } })
}
