import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { NotFoundError, OWN_CODE_PREFIX } from '../errors.js'

const GENERIC_MESSAGE = 'Internal Server Error'

/**
 * The one place errors become answers, all in the contract's Error shape
 * {error: <status>, message}. Client errors say what was wrong; anything else
 * is logged in full and answered with a generic 500.
 */
export function errorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
  // Our own 5xx errors (503: store down, overload, shutdown) are expected conditions with
  // messages written for clients; any other 5xx is a fault, logged in full, answered generically.
  const own = error.code?.startsWith(OWN_CODE_PREFIX) === true
  if (status >= 500) request.log[own ? 'warn' : 'error']({ err: error }, 'request failed')
  // Every 503 is worth retrying, and says when (the contract promises it).
  if (status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1')
  const message = status < 500 || own ? error.message : GENERIC_MESSAGE
  return reply.code(status).send({ error: status, message })
}

export function notFoundHandler (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return errorHandler(new NotFoundError(request.method, request.url), request, reply)
}
