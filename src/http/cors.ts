import type { FastifyInstance } from 'fastify'
import { allowedMethods } from '../openapi/routes/methods.ts'
import type { RouteSpec } from '../openapi/routes/routes.ts'

// CORS for browser clients on other origins (@fastify/cors), for the API's routes only: the docs
// and the probes never answer cross-origin. CORS_ORIGINS lists the exact origins allowed; `*`
// allows any. Any other origin gets no CORS header at all, so its browser refuses the answer.

const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id']
// Beyond the headers every browser exposes: what a client needs to read its errors, its retries
// and a deprecated operation's dates.
const EXPOSED_HEADERS = ['WWW-Authenticate', 'Retry-After', 'X-Request-Id', 'Allow', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Deprecation', 'Sunset']
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * `headers`: what requests may carry beside those every API call may (the document's header
 * parameters, its API keys' headers).
 */
export async function cors (app: FastifyInstance, { origins, routes, headers = [] }: { origins: string[], routes: RouteSpec[], headers?: string[] }): Promise<void> {
  if (origins.length === 0) return
  // Loaded only when CORS is on.
  const { default: fastifyCors } = await import('@fastify/cors')
  const anyOrigin = origins.includes('*')
  const allowedHeaders = [...new Set([...ALLOWED_HEADERS, ...headers])]
  const allowed = new Set(origins)
  // Each path's own methods in the document, so a new operation is allowed by itself.
  const methodsOf = new Map(allowedMethods(routes).map(({ url, declared }) => [url, declared]))
  await app.register(fastifyCors, {
    delegator: (request, callback) => {
      const { origin } = request.headers
      // @fastify/cors answers preflights through a catch-all OPTIONS route; a path that is
      // none of the API's (the docs, a typo) gets no CORS answer from it, but a 404.
      const methods = methodsOf.get(request.routeOptions.url ?? '')
      const ours = methods !== undefined && origin !== undefined && (anyOrigin || allowed.has(origin))
      callback(null, {
        origin: ours ? (anyOrigin ? '*' : origin) : false,
        // Only a real preflight is answered as one; a plain OPTIONS gets its 204 with Allow.
        preflight: request.headers['access-control-request-method'] !== undefined,
        methods,
        allowedHeaders,
        exposedHeaders: EXPOSED_HEADERS,
        maxAge: PREFLIGHT_MAX_AGE_SECONDS
      })
    }
  })
}
