import bearerAuth from '@fastify/bearer-auth'
import type { FastifyInstance, FastifyReply, onRequestHookHandler } from 'fastify'
import { UnauthorizedError } from './errors.js'
import type { TokenSet } from './tokens.js'

const BEARER = /^bearer(?:\s|$)/i
const CHALLENGE = 'Bearer realm="plants"'
const REJECTED = `${CHALLENGE}, error="invalid_token"`

function unauthorized (reply: FastifyReply, challenge: string, message: string): Error {
  reply.header('www-authenticate', challenge)
  return new UnauthorizedError(message)
}

/**
 * Registers @fastify/bearer-auth in the caller's scope and returns its check as a guard
 * for the routes that require it. bearer-auth parses the header, reading the scheme word
 * case-insensitively in rfc6749 mode (RFC 7235); the token set compares in constant time
 * and can be replaced while running. We add the RFC 6750 challenge bearer-auth does not
 * send, and answer in the contract's Error shape.
 */
export async function bearerGuard (app: FastifyInstance, tokens: TokenSet): Promise<onRequestHookHandler> {
  await app.register(bearerAuth, { keys: [], auth: (token: string) => tokens.has(token), addHook: false, specCompliance: 'rfc6749', verifyErrorLogLevel: 'debug' })
  const verify = app.verifyBearerAuth!
  return function guard (request, reply, done) {
    const header = request.headers.authorization
    // No bearer credentials at all: RFC 6750 wants the bare challenge, with no error code.
    if (header === undefined) return done(unauthorized(reply, CHALLENGE, 'Missing bearer token'))
    if (!BEARER.test(header)) return done(unauthorized(reply, CHALLENGE, 'Authorization must use the Bearer scheme'))
    verify(request, reply, (err?: Error) => done(err === undefined ? undefined : unauthorized(reply, REJECTED, 'Invalid bearer token')))
  }
}
