import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { deprecationHeaders } from './deprecation.js'
import type { Handlers } from './handler-types.js'
import type { OpenApiDocument } from './document.js'
import type { RouteSpec } from './routes.js'

// Step two of two: bind each route from routes.ts to its handler and its security guards.

/**
 * Guards the service implements, keyed by scheme kind ("http:bearer", "apiKey", ...): each makes
 * the hook for one requirement, given the scopes (OpenAPI 3.1: roles, for any scheme) it lists.
 */
export type Guards = Record<string, (scopes: string[]) => onRequestHookHandler>

export function schemeKind (scheme: { type?: string, scheme?: string }): string {
  return scheme.type === 'http' ? `http:${String(scheme.scheme).toLowerCase()}` : String(scheme.type)
}

/**
 * The guards an operation must pass, each with the scopes its requirement lists. Fails closed: a
 * scheme the service does not implement is an error, not an open door, and so are alternatives
 * that differ. `security: []` or an empty alternative `{}` means public.
 */
export function guardsFor (route: RouteSpec, document: OpenApiDocument, guards: Guards): onRequestHookHandler[] {
  const schemes: Record<string, any> = document.components?.securitySchemes ?? {}
  if (route.security.length === 0 || route.security.some((r) => Object.keys(r).length === 0)) return []
  const alternatives = route.security.map((requirement) => Object.entries(requirement).map(([name, scopes]) => {
    if (schemes[name] === undefined) throw new Error(`operation ${route.operationId} requires security scheme "${name}", which components.securitySchemes does not define`)
    const kind = schemeKind(schemes[name])
    if (guards[kind] === undefined) throw new Error(`operation ${route.operationId} requires security scheme "${name}" (${kind}), which this service does not implement`)
    return { kind, scopes: [...new Set(scopes)].sort() }
  }).sort((a, b) => a.kind.localeCompare(b.kind)))
  const spelled = alternatives.map((guards) => guards.map(({ kind, scopes }) => scopes.length === 0 ? kind : `${kind} [${scopes.join(' ')}]`).join(' + '))
  if (new Set(spelled).size > 1) {
    throw new Error(`operation ${route.operationId} offers alternative security requirements (${spelled.join(' | ')}), which this service does not implement`)
  }
  return alternatives[0].map(({ kind, scopes }) => guards[kind](scopes))
}

export function registerRoutes (app: FastifyInstance, routes: RouteSpec[], handlers: Handlers, document: OpenApiDocument, guards: Guards): void {
  const byId = handlers as unknown as Record<string, (request: unknown) => Promise<{ status: number, body: unknown }>>
  const declared = new Set(routes.map((route) => route.operationId))
  const missing = [...declared].filter((id) => typeof byId[id] !== 'function')
  const extra = Object.keys(byId).filter((id) => !declared.has(id))
  if (missing.length > 0) throw new Error(`no handler for operation(s): ${missing.join(', ')}`)
  if (extra.length > 0) throw new Error(`handler(s) for operation(s) the document does not declare: ${extra.join(', ')}`)

  // Resolve every route's guards before registering any, so a bad document registers nothing.
  const bound = routes.map((route) => ({ route, onRequest: guardsFor(route, document, guards) }))
  for (const { route, onRequest } of bound) {
    const handler = byId[route.operationId]
    // Named for its operation, as traces and profiles show it.
    const handle = {
      async [route.operationId] (request: FastifyRequest, reply: FastifyReply) {
        const { status, body } = await handler({ body: request.body, params: request.params, query: request.query, headers: request.headers })
        return reply.code(status).send(body)
      }
    }[route.operationId]
    app.route({
      method: route.method,
      url: route.url,
      schema: route.schema,
      // onRequest runs before the body is read, so an anonymous request never reaches validation.
      onRequest: route.deprecation === undefined ? onRequest : [deprecationHeaders(route.deprecation), ...onRequest],
      handler: handle
    })
  }
}
