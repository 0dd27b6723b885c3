import type { Handlers } from '../../../src/openapi/handler-types.js'

export const handlers: Handlers = {}
