import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { MethodNotAllowedError } from '../errors.js'
import type { RouteSpec } from './routes.js'

// HTTP's answers for the methods the document does not declare on a path it does declare:
// 405 with an Allow header, and OPTIONS answering 204 with Allow. The lists come from the route
// list, so a new operation in the document changes them by itself. Unknown paths stay 404.

/** Each path's Allow list: its declared methods, HEAD where GET is (Fastify answers it), and OPTIONS. */
export function allowedMethods (routes: RouteSpec[]): Map<string, string[]> {
  const byUrl = new Map<string, Set<string>>()
  for (const { url, method } of routes) {
    const methods = byUrl.get(url) ?? new Set()
    byUrl.set(url, methods.add(method))
  }
  for (const methods of byUrl.values()) {
    if (methods.has('GET')) methods.add('HEAD')
    methods.add('OPTIONS')
  }
  return new Map([...byUrl].map(([url, methods]) => [url, [...methods].sort()]))
}

/**
 * Registers, for each declared path, every other method Fastify knows. They answer in onRequest,
 * before any body is read and with no token needed: the method is wrong whoever asks, and the
 * public document says so already.
 */
export function registerMethodAnswers (app: FastifyInstance, routes: RouteSpec[]): void {
  const declared = new Set(routes.map(({ method, url }) => `${method} ${url}`))
  for (const [url, allowed] of allowedMethods(routes)) {
    const allow = allowed.join(', ')
    const notAllowed: onRequestHookHandler = (request, reply, done) => {
      reply.header('allow', allow)
      done(new MethodNotAllowedError(request.method, url, allow))
    }
    // Only a request that is no CORS preflight gets here: @fastify/cors answers those first.
    const options: onRequestHookHandler = (_request, reply) => {
      reply.code(204).header('allow', allow).send()
    }
    for (const method of app.supportedMethods) {
      if (allowed.includes(method) && method !== 'OPTIONS') continue // declared, or HEAD of a GET
      if (declared.has(`${method} ${url}`)) continue // a declared OPTIONS operation
      app.route({ method, url, onRequest: method === 'OPTIONS' ? options : notAllowed, handler: unreachable, exposeHeadRoute: false, schema: { hide: true } })
    }
  }
}

// onRequest answers every request of these routes; Fastify still wants a handler.
async function unreachable (): Promise<never> {
  throw new Error('unreachable: answered in onRequest')
}
