import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

// Every request has an id: the caller's X-Request-Id when it is a sane token (so one id follows
// a request through a load balancer and the client's own logs), else a fresh UUID. It is sent
// back on every answer and logged with it. A hostile value is never echoed or logged as sent.

export const REQUEST_ID_HEADER = 'x-request-id'
const SANE_ID = /^[A-Za-z0-9._-]{1,128}$/

/** Fastify's genReqId. */
export function requestId (request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID()
}

/** Sends the id back on every answer. Called on the root instance, first, so that early rejections carry it too. */
export function echoRequestId (app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    done()
  })
}
