import { jsonText, parseExactJson } from '../../http/json-body.ts'
import { responseFor } from '../answers/responses.ts'
import type { ParameterSpec, RouteSpec } from '../routes/routes.ts'
import { valueAt } from '../schemas/schema.ts'
import type { Values } from './cases.ts'
import type { Answer } from './checks.ts'
import type { HttpRequest } from './spelling.ts'

// OpenAPI's links: an answer names the values of a next request ("create, then read what was
// created"), each a constant or a runtime expression read from the exchange: $url, $method,
// $statusCode, $request.path|query|header.NAME, $request.body#/pointer, and the same of
// $response; or text with such expressions in braces. The verifier follows them as Schemathesis'
// stateful runs do (verifier.ts). A link it cannot follow (its target is another document's, or
// no operation the run verifies) is named, and left.

export interface Link {
  name: string
  target: RouteSpec
  /** The target's parameters the link gives, each by its location (when the link says it) and name. */
  parameters: Array<{ in?: string, name: string, value: unknown }>
  requestBody?: unknown
}

/** What an exchange holds for a link's expressions: the request as sent, its values (each of `parameters`'), and the answer. */
export interface Exchange { request: HttpRequest, parameters: ParameterSpec[], values: Values, answer: Answer, baseUrl: string }

/** The links of the answer `status` gives, with their targets among `routes`; and why each of the others cannot be followed. */
export function linksOf (route: RouteSpec, status: number, routes: RouteSpec[]): { links: Link[], unfollowable: string[] } {
  const links: Link[] = []
  const unfollowable: string[] = []
  const response = responseFor(route.responses, status)
  for (const [name, link] of Object.entries(response?.links ?? {})) {
    const target = typeof link.operationId === 'string'
      ? routes.find((r) => r.operationId === link.operationId)
      : typeof link.operationRef === 'string' ? routes.find((r) => r.pointer === decoded(link.operationRef)) : undefined
    if (target === undefined) {
      unfollowable.push(`link ${name} of ${status}: ${String(link.operationId ?? link.operationRef)} is no operation verified here`)
      continue
    }
    const parameters = Object.entries<unknown>(link.parameters ?? {}).map(([key, value]) => {
      const qualified = /^(path|query|header|cookie)\.(.+)$/.exec(key)
      return qualified === null ? { name: key, value } : { in: qualified[1], name: qualified[2], value }
    })
    links.push({ name, target, parameters, ...(link.requestBody !== undefined && { requestBody: link.requestBody }) })
  }
  return { links, unfollowable }
}

/** An operationRef as a JSON pointer: its braces may be written %7B and %7D, as in a URI. */
function decoded (ref: string): string {
  try {
    return decodeURIComponent(ref)
  } catch {
    return ref
  }
}

// A whole value that is one expression, or one in braces within text.
const WHOLE = /^\$(url|method|statusCode|request\.|response\.)/
const EMBEDDED = /\{(\$[^}]+)\}/g

/** A link's value in this exchange: a constant as it is, an expression read from it; undefined when the exchange has nothing there. */
export function evaluate (value: unknown, exchange: Exchange): unknown {
  if (typeof value !== 'string') return value
  if (WHOLE.test(value)) return expression(value, exchange)
  if (!value.includes('{$')) return value
  return value.replace(EMBEDDED, (_, inner: string) => {
    const found = expression(inner, exchange)
    return found === undefined ? '' : typeof found === 'string' ? found : jsonText(found)
  })
}

function expression (text: string, { request, parameters, values, answer, baseUrl }: Exchange): unknown {
  if (text === '$url') return new URL(request.path, baseUrl).href
  if (text === '$method') return request.method
  if (text === '$statusCode') return answer.status
  const [, side, source, rest] = /^\$(request|response)\.(header|query|path|body)(.*)$/.exec(text) ?? []
  if (source === 'body') {
    let body: unknown
    try {
      body = side === 'request' ? values.body : parseExactJson(answer.body.toString('utf8'))
    } catch {
      return undefined // not JSON: no pointer reads it
    }
    if (rest === '') return body
    if (!rest.startsWith('#')) return undefined
    try {
      return valueAt(body, rest.slice(1))
    } catch {
      return undefined // a malformed %-escape: the pointer names nothing
    }
  }
  const name = rest?.slice(1)
  if (side === 'response') return source === 'header' ? answer.headers[name.toLowerCase()] : undefined
  if (source === 'header') return Object.entries(request.headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]
  const index = parameters.findIndex((p) => p.in === source && p.name === name)
  return index < 0 ? undefined : values.parameters[index]
}

/** What the link gives the target's request, in place of its own values: parameters by their index in `targetParameters`, and the body. */
export function linkedValues (link: Link, exchange: Exchange, targetParameters: ParameterSpec[]): { parameters: Map<number, unknown>, body?: { value: unknown } } {
  const parameters = new Map<number, unknown>()
  for (const given of link.parameters) {
    const index = targetParameters.findIndex((p) => (given.in === undefined || p.in === given.in) &&
      (p.in === 'header' ? p.name.toLowerCase() === given.name.toLowerCase() : p.name === given.name))
    if (index >= 0) parameters.set(index, evaluate(given.value, exchange))
  }
  return { parameters, ...(link.requestBody !== undefined && { body: { value: evaluate(link.requestBody, exchange) } }) }
}
