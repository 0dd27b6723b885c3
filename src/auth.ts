import bearerAuth from '@fastify/bearer-auth'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { UnauthorizedError } from './errors.js'

const REALM = 'plants'
const BEARER = /^bearer(?:\s|$)/i

/**
 * Registers @fastify/bearer-auth in the caller's scope and returns its check as a guard
 * for the routes that require it. bearer-auth compares tokens in constant time and,
 * in rfc6749 mode, reads the scheme word case-insensitively (RFC 7235). We add the
 * RFC 6750 challenge it does not send, and answer in the contract's Error shape.
 */
export async function bearerGuard (app: FastifyInstance, tokens: string[]): Promise<onRequestHookHandler> {
  await app.register(bearerAuth, { keys: tokens, addHook: false, specCompliance: 'rfc6749', verifyErrorLogLevel: 'debug' })
  const verify = app.verifyBearerAuth!
  return function guard (request, reply, done) {
    verify(request, reply, (err?: Error) => {
      if (err === undefined) return done()
      const header = request.headers.authorization
      if (header === undefined || !BEARER.test(header)) {
        reply.header('www-authenticate', `Bearer realm="${REALM}"`)
        return done(new UnauthorizedError(header === undefined ? 'Missing bearer token' : 'Authorization must use the Bearer scheme'))
      }
      reply.header('www-authenticate', `Bearer realm="${REALM}", error="invalid_token"`)
      done(new UnauthorizedError('Invalid bearer token'))
    })
  }
}
