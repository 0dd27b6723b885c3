import { parseCookie } from 'cookie'
import type { FastifyRequest } from 'fastify'
import type { Location, ParameterSpec } from '../routes/routes.ts'

// Parameters as they arrive, text, turned into the values their schemas describe, as OpenAPI's
// styles spell them (its "style values" table): a list or an object in a path segment (simple,
// label, matrix), a query (form, exploded or not, spaceDelimited, pipeDelimited, deepObject), a
// header (simple) or a cookie (form). What comes out are strings, lists and objects of strings;
// the validator then converts each string to the type its schema gives (validation.ts), a single
// value to a list of one where a list is declared. A parameter given by content (JSON in a query)
// is parsed as its media type says. Undeclared parameters are ignored, as OpenAPI allows them.

type Pair = [string, string]
export type Parts = Record<Location, Record<string, unknown>>

/** Splits a list, as a style spells one; an empty value is an empty list. */
const list = (text: string, separator: string | RegExp): string[] => text === '' ? [] : text.split(separator)

/** Members from alternating names and values: a,1,b,2. */
function alternating (items: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < items.length; i += 2) out[items[i]] = items[i + 1]
  return out
}

/** Members from name=value items: a=1,b=2. */
function assigned (items: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of items) {
    const at = item.indexOf('=')
    if (at > 0) out[item.slice(0, at)] = item.slice(at + 1)
  }
  return out
}

/** A value spelled in one piece of text (a path segment, a header, a cookie, a non-exploded query value). */
function fromText (parameter: ParameterSpec, text: string): unknown {
  const { shape, style, explode, name } = parameter
  let rest = text
  let separator = ','
  if (style === 'label') {
    rest = text.startsWith('.') ? text.slice(1) : text
    if (explode) separator = '.'
  } else if (style === 'matrix') {
    rest = text.startsWith(';') ? text.slice(1) : text
    if (shape === 'primitive' || !explode || shape === 'array') {
      // ;id=5, ;id=3,4,5, or exploded ;id=3;id=4;id=5
      if (shape === 'array' && explode) return rest.split(';').map((item) => item.slice(item.indexOf('=') + 1))
      rest = rest.startsWith(`${name}=`) ? rest.slice(name.length + 1) : rest
    } else {
      separator = ';'
    }
  } else if (style === 'spaceDelimited') {
    separator = ' '
  } else if (style === 'pipeDelimited') {
    separator = '|'
  }
  if (shape === 'primitive') return rest
  const items = list(rest, separator).map((item) => style === 'simple' ? item.trim() : item)
  if (shape === 'array') return items
  return explode && style !== 'spaceDelimited' && style !== 'pipeDelimited' ? assigned(items) : alternating(items)
}

/** A member's name within a deepObject: `[]` (no name) is the next item. */
const place = (into: object, member: string): string => member === '' ? String(Object.keys(into).length) : member

/**
 * deepObject: name[a]=1&name[b][c]=2 as { a: '1', b: { c: '2' } }. A list, which OpenAPI leaves
 * undefined in this style, as Stripe's and qs's clients spell one: name[]=a&name[]=b, at any
 * depth; or by index, name[0]=a&name[1]=b, read here as an object that the schema then makes a
 * list where it declares one (request-validation.ts).
 */
function deepObject (name: string, pairs: Pair[]): Record<string, unknown> | undefined {
  let out: Record<string, any> | undefined
  for (const [key, value] of pairs) {
    if (!key.startsWith(`${name}[`)) continue
    const path = [...key.slice(name.length).matchAll(/\[([^\]]*)\]/g)].map(([, member]) => member)
    if (path.length === 0 || path.some((member) => member === '__proto__' || member === 'constructor' || member === 'prototype')) continue
    out ??= {}
    // A member already given as text stays so: name[a]=1&name[a][b]=2 reads { a: '1' }.
    let target: any = out
    path.slice(0, -1).forEach((member, i) => { target = typeof target === 'object' ? (target[place(target, member)] ??= path[i + 1] === '' ? [] : {}) : target })
    if (typeof target === 'object') target[place(target, path.at(-1)!)] = value
  }
  return out
}

/** A query parameter, from the query's name=value pairs (each name and value percent-decoded). */
function fromQuery (parameter: ParameterSpec, pairs: Pair[], claimed: Set<string>, properties?: string[]): unknown {
  const { name, shape, style, explode } = parameter
  // deepObject spells objects only; a value of another shape in it (Stripe styles every field of
  // its forms so, default_return_url=https://… among them) is spelled as form, as its clients send it.
  if (style === 'deepObject') return deepObject(name, pairs) ?? (shape === 'object' ? undefined : fromQuery({ ...parameter, style: 'form', explode: true }, pairs, claimed))
  if (shape === 'object' && explode && style === 'form') {
    // Exploded, each member is a parameter of its own: ?R=100&G=200.
    const out: Record<string, string> = {}
    for (const [key, value] of pairs) {
      if (properties === undefined ? !claimed.has(key) : properties.includes(key)) out[key] = value
    }
    return Object.keys(out).length === 0 ? undefined : out
  }
  const values = pairs.filter(([key]) => key === name).map(([, value]) => value)
  if (values.length === 0) return undefined
  if (shape === 'array' && explode && (style === 'form' || values.length > 1)) return values
  return fromText(parameter, values[0])
}

/** Whether a parameter given by content is JSON; in any other media type (Telnyx's ids, of any type) its text is its value. The verifier spells it so too. */
export const jsonContent = (parameter: ParameterSpec): boolean => /\bjson\b/.test(parameter.contentType ?? '')

/** The value of a parameter given by content, parsed as its media type says. */
function fromContent (parameter: ParameterSpec, text: string): unknown {
  if (!jsonContent(parameter)) return text
  try {
    return JSON.parse(text)
  } catch {
    return text // not JSON: its schema, not a parse error, says what is wrong
  }
}

/** The Cookie header's name=value pairs, by jshttp's cookie (the first of a name wins, values percent-decoded). */
function cookiePairs (header: string | undefined): Pair[] {
  if (header === undefined) return []
  return Object.entries(parseCookie(header)).filter((pair): pair is Pair => pair[1] !== undefined)
}

/**
 * A form body (application/x-www-form-urlencoded) read as a query is, each property of its schema
 * a parameter with the style its encoding gives (form, exploded, by default); what no property
 * claims is kept as sent, text, or a list of texts when repeated.
 */
export function formReader (fields: ParameterSpec[], properties: (field: ParameterSpec) => string[] | undefined): (text: string) => Record<string, unknown> {
  // A field claims its name, but for an exploded object, whose members are fields of their own.
  const claimed = new Set(fields.filter((f) => f.contentType !== undefined || !(f.shape === 'object' && f.explode)).map((f) => f.name))
  const members = new Map(fields.map((f) => [f, properties(f)]))
  for (const wanted of members.values()) for (const name of wanted ?? []) claimed.add(name)
  return (text) => {
    const pairs = [...new URLSearchParams(text)]
    const out: Record<string, unknown> = Object.create(null)
    for (const field of fields) {
      const value = field.contentType !== undefined
        ? pairs.filter(([key]) => key === field.name).map(([, v]) => fromContent(field, v))[0]
        : fromQuery(field, pairs, claimed, members.get(field))
      if (value !== undefined) out[field.name] = value
    }
    for (const [key, value] of pairs) {
      if (claimed.has(key) || fields.some((f) => key.startsWith(`${f.name}[`))) continue
      out[key] = key in out ? [out[key], value].flat() : value
    }
    return out
  }
}

/** The query's name=value pairs, percent-decoded, as WHATWG's URLSearchParams reads them. */
function queryPairs (url: string): Pair[] {
  const at = url.indexOf('?')
  return at < 0 ? [] : [...new URLSearchParams(url.slice(at + 1))]
}

/**
 * A reader of the route's declared parameters, each by its location: the path's from the router's
 * parameters (pathNames: the router's name of each), the rest from the request's URL and headers.
 * `properties` gives the member names of each exploded form object in the query.
 */
export function parameterReader (parameters: ParameterSpec[], pathNames: Record<string, string>, properties: (parameter: ParameterSpec) => string[] | undefined): (request: FastifyRequest) => Parts {
  const routerName = Object.fromEntries(Object.entries(pathNames).map(([router, name]) => [name, router]))
  const inQuery = parameters.filter((p) => p.in === 'query')
  // What the query's other parameters take, so that an exploded object with no declared members takes the rest.
  const claimed = new Set(inQuery.filter((p) => !(p.shape === 'object' && p.explode)).map((p) => p.name))
  const members = new Map(inQuery.map((p) => [p, properties(p)]))
  return (request) => {
    const parts: Parts = { path: {}, query: {}, header: {}, cookie: {} }
    let pairs: Pair[] | undefined
    let cookies: Pair[] | undefined
    for (const parameter of parameters) {
      let value: unknown
      let text: string | undefined
      switch (parameter.in) {
        case 'path':
          text = (request.params as Record<string, string>)[routerName[parameter.name]]
          break
        case 'header': {
          const header = request.headers[parameter.name]
          text = Array.isArray(header) ? header.join(', ') : header
          break
        }
        case 'cookie': {
          cookies ??= cookiePairs(request.headers.cookie)
          if (parameter.shape === 'object' && parameter.explode && parameter.contentType === undefined) {
            const wanted = members.get(parameter) ?? properties(parameter)
            const own = cookies.filter(([key]) => wanted?.includes(key))
            if (own.length > 0) value = Object.fromEntries(own)
          } else {
            text = cookies.find(([key]) => key === parameter.name)?.[1]
          }
          break
        }
        case 'query': {
          pairs ??= queryPairs(request.url)
          if (parameter.contentType !== undefined) text = pairs.find(([key]) => key === parameter.name)?.[1]
          else value = fromQuery(parameter, pairs, claimed, members.get(parameter))
          break
        }
      }
      if (text !== undefined) value = parameter.contentType !== undefined ? fromContent(parameter, text) : fromText(parameter, text)
      if (value !== undefined) parts[parameter.in][parameter.name] = value
    }
    return parts
  }
}
