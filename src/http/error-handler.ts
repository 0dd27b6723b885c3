import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { NotFoundError, OWN_CODE_PREFIX } from '../errors.ts'
import type { ErrorWriter } from '../openapi/answers/error-shapes.ts'

const GENERIC_MESSAGE = 'Internal Server Error'

/** The contract's Error, {error: <status>, message}: how errors are written until a document says otherwise. */
export const plainError: ErrorWriter = (status, message) => ({ body: { error: status, message }, type: 'application/json; charset=utf-8' })

/**
 * The one way errors become answers, in the shape `writer` gives: the operation's, for its status
 * (openapi/answers/error-shapes.ts; each operation has its own handler), else the one for requests that
 * matched no operation (a 404, the docs, the probes). Client errors say what was wrong; anything
 * else is logged in full and answered with a generic 500.
 */
export function errorHandler (writer: () => ErrorWriter) {
  return function handleError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
    // Our own 5xx errors (503: store down, overload, shutdown) are expected conditions with
    // messages written for clients; any other 5xx is a fault, logged in full, answered generically.
    const own = error.code?.startsWith(OWN_CODE_PREFIX) === true
    if (status >= 500) {
      // Fastify hangs the route's config on a serializer's error: with the document's operation,
      // examples and all (kilobytes). The route names it.
      if ('serialization' in error) (error as { serialization: unknown }).serialization = `${request.method} ${request.routeOptions.url ?? request.url}`
      request.log[own ? 'warn' : 'error']({ err: error }, 'request failed')
    }
    // Every 503 is worth retrying, and says when (the contract promises it).
    if (status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1')
    const message = status < 500 || own ? error.message : GENERIC_MESSAGE
    const { body, type } = writer()(status, message)
    return reply.code(status).type(type).send(body)
  }
}

/** 404 for a request no route matched, as errorHandler writes errors. */
export function notFoundHandler (handle: ReturnType<typeof errorHandler>) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => handle(new NotFoundError(request.method, request.originalUrl) as FastifyError, request, reply)
}
