// Control: a correct handler map compiles, so the failures next to it are real.
import type { HandlersOf } from '../../../src/openapi/routes/handler-types.ts'
import type { operations } from './openapi.js'

export const handlers: HandlersOf<operations> = {
  createThing: async ({ body }) => body.name === ''
    ? { status: 400, body: { error: 400, message: 'empty name' } }
    : { status: 200, body: { name: body.name, tag: body.tag } },
  getThing: async ({ params }) => params.id === 0
    ? { status: 404, body: { error: 404, message: 'no thing 0' } }
    : { status: 200, body: { name: `thing ${params.id}` } }
}
