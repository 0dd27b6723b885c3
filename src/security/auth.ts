import bearerAuth from '@fastify/bearer-auth'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify'
import { UnauthorizedError } from '../errors.js'
import type { Limits } from './rate-limit.js'
import type { TokenSet } from './tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The identity of the token the request passed the bearer guard with (tokens.ts); empty before. */
    tokenIdentity: string
  }
}

const BEARER = /^bearer(?:\s|$)/i
const CHALLENGE = 'Bearer realm="plants"'
const REJECTED = `${CHALLENGE}, error="invalid_token"`

/**
 * Registers @fastify/bearer-auth in the caller's scope and returns its check as a guard
 * for the routes that require it. bearer-auth parses the header, reading the scheme word
 * case-insensitively in rfc6749 mode (RFC 7235); the token set compares in constant time
 * and can be replaced while running. We add the RFC 6750 challenge bearer-auth does not
 * send, and answer in the contract's Error shape. With rate limits, a request is counted
 * once judged: against its token when it passed, against its client's address when not.
 */
export async function bearerGuard (app: FastifyInstance, tokens: TokenSet, limits?: Limits): Promise<onRequestHookHandler> {
  app.decorateRequest('tokenIdentity', '')
  const auth = (token: string, request: FastifyRequest): boolean => {
    request.tokenIdentity = tokens.identify(token) ?? ''
    return request.tokenIdentity !== ''
  }
  await app.register(bearerAuth, { keys: [], auth, addHook: false, specCompliance: 'rfc6749', verifyErrorLogLevel: 'debug' })
  const verify = app.verifyBearerAuth!

  const admit = limits === undefined
    ? (_request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => done()
    : (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => { limits.byToken(request, reply).then(() => done(), done) }
  const refuse = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, challenge: string, message: string): void => {
    const unauthorized = (): void => {
      reply.header('www-authenticate', challenge)
      done(new UnauthorizedError(message))
    }
    if (limits === undefined) unauthorized()
    else limits.byAddress(request, reply).then(unauthorized, done)
  }

  return function guard (request, reply, done) {
    const header = request.headers.authorization
    // No bearer credentials at all: RFC 6750 wants the bare challenge, with no error code.
    if (header === undefined) return refuse(request, reply, done, CHALLENGE, 'Missing bearer token')
    if (!BEARER.test(header)) return refuse(request, reply, done, CHALLENGE, 'Authorization must use the Bearer scheme')
    verify(request, reply, (err?: Error) => err === undefined ? admit(request, reply, done) : refuse(request, reply, done, REJECTED, 'Invalid bearer token'))
  }
}
