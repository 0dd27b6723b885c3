// Control for answers.yaml: a handler reads each optional parameter, typed (header names in lower
// case, as requests carry them), and answers any status that default or a range stands for.
import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './answers.js'

export const handlers: HandlersOf<operations> = {
  listPets: async ({ query, headers, cookies }) => {
    const limit: number = query.limit ?? 20
    if (headers['x-trace-id'] === '' || cookies.session === '') return { status: 400, body: { code: 400, message: 'empty' } }
    return limit > 100 ? { status: 503, body: { code: 503, message: 'busy' } } : { status: 200, body: [{ name: 'Rex' }] }
  },
  removePet: async ({ params }) => params.id === 0
    ? { status: 404, body: { missing: params.id } }
    : params.id < 0 ? { status: 409, body: { code: 409, message: 'in use' } } : { status: 204 }
}
