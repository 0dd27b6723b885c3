// Control: a correct handler map compiles, so the failures next to it are real.
import type { Handlers } from '../../../src/openapi/handler-types.js'

export const handlers: Handlers = {
  createPlant: async ({ body }) => body.name === ''
    ? { status: 400, body: { error: 400, message: 'empty name' } }
    : { status: 200, body: { name: body.name, tag: body.tag } }
}
