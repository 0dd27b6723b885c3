import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { MethodNotAllowedError } from '../../errors.ts'
import type { RouteSpec } from './routes.ts'

// HTTP's answers for the methods the document does not declare on a path it does declare:
// 405 with an Allow header, and OPTIONS answering 204 with Allow. The lists come from the route
// list, so a new operation in the document changes them by itself. Unknown paths stay 404.

export interface PathMethods {
  /** The path as the document spells it (/plants/{id}), as messages name it. */
  path: string
  /** The same path in Fastify's form (/plants/:id). */
  url: string
  /** The methods that serve its requests: declared on it, or on a templated path that takes them all (GitLab's GET /services/{service_slug} for /services/asana, which declares PUT alone). */
  declared: string[]
  /** Its Allow list: the declared methods, HEAD where GET is (Fastify answers it), and OPTIONS. */
  allowed: string[]
}

/** Whether every request of the router's `url` is one of `template`'s too (of as many segments): each segment the same, or a whole segment's parameter in the template. */
const covers = (template: string[], url: string[]): boolean => template.every((segment, i) => segment === url[i] || /^:p\d+$/.test(segment))

/** Each declared path with its methods, in the document's order; paths the router cannot tell apart (/a/{x} and /a/{y}) as one. */
export function allowedMethods (routes: RouteSpec[]): PathMethods[] {
  const byUrl = new Map<string, { path: string, declared: Set<string> }>()
  for (const { path, url, method } of routes) {
    const entry = byUrl.get(url) ?? { path, declared: new Set<string>() }
    byUrl.set(url, entry)
    entry.declared.add(method)
  }
  // A method another path serves for all of this one's requests: the router takes them there.
  const byLength = new Map<number, Array<[string, string[]]>>()
  for (const url of byUrl.keys()) {
    const segments = url.split('/')
    byLength.set(segments.length, [...byLength.get(segments.length) ?? [], [url, segments]])
  }
  for (const alike of byLength.values()) {
    for (const [url, own] of alike) {
      for (const [other, template] of alike) if (other !== url && covers(template, own)) for (const method of byUrl.get(other)!.declared) byUrl.get(url)!.declared.add(method)
    }
  }
  return [...byUrl].map(([url, { path, declared }]) => {
    const allowed = new Set(declared)
    if (allowed.has('GET')) allowed.add('HEAD')
    allowed.add('OPTIONS')
    return { path, url, declared: [...declared].sort(), allowed: [...allowed].sort() }
  })
}

/**
 * Registers, for each declared path, every other method Fastify knows. They answer in onRequest,
 * before any body is read and with no token needed: the method is wrong whoever asks, and the
 * public document says so already.
 */
export function registerMethodAnswers (app: FastifyInstance, routes: RouteSpec[]): void {
  for (const { path, url, declared, allowed } of allowedMethods(routes)) {
    const allow = allowed.join(', ')
    const notAllowed: onRequestHookHandler = (request, reply, done) => {
      reply.header('allow', allow)
      done(new MethodNotAllowedError(request.method, path, allow))
    }
    // Only a request that is no CORS preflight gets here: @fastify/cors answers those first.
    const options: onRequestHookHandler = (_request, reply) => {
      reply.code(204).header('allow', allow).send()
    }
    // Every other method as one route, as a big document has hundreds of paths.
    const others = app.supportedMethods.filter((method) => !declared.includes(method) && method !== 'OPTIONS' && !(method === 'HEAD' && declared.includes('GET')))
    if (others.length > 0) app.route({ method: others, url, onRequest: notAllowed, handler: unreachable, exposeHeadRoute: false, schema: { hide: true } })
    if (!declared.includes('OPTIONS')) app.route({ method: 'OPTIONS', url, onRequest: options, handler: unreachable, exposeHeadRoute: false, schema: { hide: true } })
  }
}

// onRequest answers every request of these routes; Fastify still wants a handler.
async function unreachable (): Promise<never> {
  throw new Error('unreachable: answered in onRequest')
}
