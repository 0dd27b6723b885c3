import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { OpenApiDocument } from '../document/document.ts'
import { httpConfig } from '../../http/config.ts'
import { jsonText, parseJsonBody } from '../../http/json-body.ts'
import { concreteType, kindOf, matchMedia } from '../requests/bodies.ts'
import { parameterValidation } from '../requests/request-validation.ts'
import { propertiesOf, requiredIn } from '../routes/resources.ts'
import type { MediaSpec, ParameterSpec, RouteSpec } from '../routes/routes.ts'
import { examplesOf } from '../schemas/examples.ts'
import { validSample } from '../schemas/samples.ts'
import { derefSchema } from '../schemas/schema.ts'
import type { Validators } from '../schemas/validation.ts'
import { arbitraryOf } from './arbitraries.ts'
import { edgesOf, without, type Edges } from './bounds.ts'
import { credentialsFor, isPublic, wrongCredentialsFor, type GivenCredentials, type Secret } from './credentials.ts'
import { bodyIn, bodyReadBack, cookiePairs, isNested, queryPairs, spelled, type HttpRequest } from './spelling.ts'

// What the verifier sends an operation. Valid requests: the document's examples (where they are
// valid against their schemas), a sample of each body media type (schemas/samples.ts), the sample
// with its values at their lowest and at their highest bounds (bounds.ts), and values drawn from
// the schemas (arbitraries.ts); each value is valid by the engine's own validators, so what the
// verifier calls valid is what the mock and the service accept. Invalid requests, each the sample
// with one fault: a body without a required property, or without one its other properties
// require, a property of the wrong type, a property or
// a parameter past one of its bounds, a required query parameter or header missing, a path
// parameter of the wrong type, a media type the operation does not declare, no credentials, and
// credentials that are not the ones given.

// What a valid request's line and headers may hold: what servers commonly take (8 KiB: nginx's,
// Apache's); past it a server's HTTP layer refuses them, 431 or 414, before the API sees them.
const MAX_HEAD_BYTES = 8 * 1024

/** Whether a request's line and headers pass MAX_HEAD_BYTES. */
const overHead = (request: HttpRequest): boolean =>
  Buffer.byteLength(request.path) + Object.entries(request.headers).reduce((sum, [name, value]) => sum + name.length + Buffer.byteLength(value) + 4, 0) > MAX_HEAD_BYTES

// The most fields of a form, or parts of a multipart body, the engine reads (MAX_PARTS at its
// default, @fastify/multipart's bound): past it, it answers 413 before reading them, as servers
// bound theirs. A list of 1,000 items at its maxItems, one part an item, is past it.
const MAX_PARTS = httpConfig.variables.MAX_PARTS.default as number

/** A form's fields, or a multipart body's parts, as the request carries them (spelling.ts); 0 for any other body. */
function partCount ({ headers, body }: HttpRequest): number {
  const type = headers['content-type'] ?? ''
  if (typeof body !== 'string') return 0
  if (type.startsWith('multipart/')) return body.split('\r\nContent-Disposition: form-data').length - 1
  return type.startsWith('application/x-www-form-urlencoded') && body !== '' ? body.split('&').length : 0
}

export type Fault = 'body without a required property' | 'body without a property its others require' | 'body property of the wrong type' | 'body property out of its bounds' |
  'required query parameter missing' | 'required header missing' | 'path parameter of the wrong type' | 'parameter out of its bounds' |
  'undeclared media type' | 'no credentials' | 'wrong credentials' | 'undeclared method'

/** Where a valid request's values come from: a link's are given by an earlier answer (links.ts), the rest are samples; the proxy's, a client's live traffic. */
export const SOURCES = ['example', 'sample', 'minimal', 'bounds', 'generated', 'link', 'sequence', 'traffic'] as const
export type Source = typeof SOURCES[number]

export interface Case {
  /** What the request is: valid, or invalid by one fault. */
  kind: 'valid' | 'invalid'
  source: Source
  fault?: Fault
  request: HttpRequest
  /** The values it was made of, for a link's expressions to read. */
  values: Values
  /** The credentials it carries, for a curl command to name by variable. */
  secrets: Secret[]
  /** Where its fault is a value past a bound: what it is, and the keyword it breaks. */
  breaks?: string
}

/** Where a value of a request is: a parameter, by its index; in the body, by the names and indexes that lead to it ([] is the body). */
type Place = number | Array<string | number>
/** A change to a request's values: the value at a place. */
interface Change { at: Place, value: unknown }

/** The values of a request: each parameter's (absent when undefined) and the body's, in a media type. */
export interface Values { parameters: unknown[], media?: MediaSpec, body?: unknown }

/** An operation no valid request can be made for by these means (a schema no value satisfies, a pattern the sampler cannot follow). */
export class Unbuildable extends Error {}

// What the HTTP client writes itself: the body's length, the host, the connection.
const FRAMING = new Set(['content-length', 'transfer-encoding', 'host', 'connection'])
// A media type that no operation declares, but for */*.
const UNDECLARED = 'application/x-verify-undeclared'
// The values sent past a bound of theirs (each in a request of its own) for one operation: no more than these.
const MAX_PAST = 16
// How deep in a JSON body values are sent at and past their bounds: a property's property, a list's item's.
const MAX_DEPTH = 4

export interface Planner {
  /** The operation's parameters, in the order Values holds them. */
  parameters: ParameterSpec[]
  /** Valid requests from the document's examples and from samples; their first is the base of the invalid ones. Throws Unbuildable. */
  fixed: () => Case[]
  /** The invalid requests, each the base with one fault. */
  invalid: () => Case[]
  /** Values drawn from the schemas, and the request of each: undefined for values the engine would refuse (not sent as valid). */
  generated: () => { values: fc.Arbitrary<Values>, request: (values: Values) => Case | undefined } | undefined
  /** The sample with the values a link gives in place of its own; the engine's refusal of them instead. Throws Unbuildable. */
  linked: (given: { parameters: Map<number, unknown>, body?: { value: unknown } }) => Case | Error
  /** A request at its bounds as its parts: each value at its bound alone, to find the one an answer fails on; none for any other request. */
  parts: (sent: Case) => Case[]
  /** The media type its valid requests' bodies are sent in: JSON where the operation takes it. */
  media?: MediaSpec
}

/**
 * The requests of one operation. `pinned`: path parameters (by name) given the keys of what was made
 * first (the shelf of /shelves/{shelfId}/books), so that every request names data that is there;
 * each in every request but one that changes it on purpose, and where its schema takes it.
 */
export function planner (doc: OpenApiDocument, route: RouteSpec, validators: Validators, given: GivenCredentials, pinned: Record<string, unknown> = {}): Planner {
  const parameters = route.parameters.filter((p) => !(p.in === 'header' && FRAMING.has(p.name)))
  // A key the path cannot carry (".", which a URL's dot segments take out) is not pinned: the
  // operation's requests name another, as if nothing had been made.
  const pinnedAt = new Map(parameters.flatMap((p, i): Array<[number, unknown]> =>
    p.in === 'path' && Object.hasOwn(pinned, p.name) && p.schema !== undefined && validators.text(p.schema)(String(pinned[p.name])) && sendable(p, pinned[p.name]) ? [[i, pinned[p.name]]] : []))
  const valid = (schema: object | undefined, value: unknown): boolean => schema === undefined || validators.request(schema)(value)
  /** A body's value as the service reads it: JSON through the engine's own parser (an integer past 2^53 comes back exact, a bigint). */
  const asRead = (m: MediaSpec, value: unknown): unknown => kindOf(m.type) === 'json' ? parseJsonBody(jsonText(value ?? {})) : value
  /** A body valid as the engine reads it once sent: JSON by its parser; a form or multipart body as its fields come back, each converted from text. */
  const bodyValid = (m: MediaSpec, value: unknown): boolean => {
    if (m.schema === undefined) return true
    // No content (an empty form) is no body, as the engine reads it: valid where none is required.
    if (route.body?.required !== true && bodyIn(doc, m, value).body.length === 0) return true
    try {
      if (!['form', 'multipart'].includes(kindOf(concreteType(m.type)))) return valid(m.schema, asRead(m, value))
      return validators.text(m.schema)(bodyReadBack(doc, m, value))
    } catch {
      // A value no form spells (a lone surrogate, say), or JSON past the parser's bounds (Azure's
      // application gateways, nested past 32 levels): no body the engine reads.
      return false
    }
  }
  const media = route.body?.media ?? []
  // A client sends JSON where the operation takes it.
  const preferred = media.find((m) => /json/.test(m.type)) ?? media[0]

  /** A valid value of `schema`; none for an optional part no value of which is valid (data2crm's dates whose pattern no string matches): a client leaves it out. */
  const sampleOf = (schema: object | undefined, optional = false): unknown => {
    if (schema === undefined) return undefined
    const made = validSample(doc, schema, validators.request(schema), { direction: 'request' })
    if (made?.valid === true) return made.value
    if (optional) return undefined
    throw new Unbuildable(`no valid value of ${JSON.stringify(schema).slice(0, 120)} could be made`)
  }
  /** Values with every parameter's sample (an optional one's left out when no style spells it, or no value is valid) and the body's in `m`. */
  const sampled = (m: MediaSpec | undefined): Values => ({
    parameters: parameters.map((p, i) => {
      if (pinnedAt.has(i)) return pinnedAt.get(i)
      const value = sampleOf(p.schema, !p.required)
      if (p.contentType !== undefined || !isNested(value)) return value
      if (p.required) throw new Unbuildable(`${p.in} parameter ${p.name} is a structure no style spells`)
      return undefined
    }),
    media: m,
    body: m === undefined ? undefined : sampleOf(m.schema)
  })
  /** A body of `m` of its required properties alone, where one is valid as the engine reads it. */
  const minimalBody = (m: MediaSpec): unknown => {
    const made = validSample(doc, m.schema, validators.request(m.schema!), { direction: 'request', minimal: true })
    return made?.valid === true && bodyValid(m, made.value) ? made.value : undefined
  }
  const firstValid = (object: { object: Record<string, any>, schema?: object }): { value: unknown } | undefined => {
    const example = examplesOf(doc, object).find(({ value }) => valid(object.schema, value))
    return example === undefined ? undefined : { value: example.value }
  }

  // The parameters of a request as the engine reads them (its router's path parameters, decoded;
  // its URL; its headers): what it would refuse is no valid request, whatever the values were.
  const checkParameters = parameterValidation(route, doc, validators)
  const routerName = Object.fromEntries(Object.entries(route.pathNames).map(([router, name]) => [name, router]))
  const engineRefuses = (request: HttpRequest, values: Values): Error | undefined => {
    try {
      const params: Record<string, string> = {}
      parameters.forEach((p, i) => {
        if (p.in === 'path' && values.parameters[i] !== undefined) params[routerName[p.name]] = decodeURIComponent(spelled(p, values.parameters[i], encodeURIComponent))
      })
      // A header's value as it arrives: HTTP drops the spaces and tabs about it (RFC 9110 §5.5).
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, value.replace(/^[ \t]+|[ \t]+$/g, '')]))
      return checkParameters({ params, url: request.path, headers })
    } catch (err) {
      return err as Error // a value no URL can hold (a lone surrogate), say
    }
  }

  // The parameters the operation's credentials are sent as: an API key may be a declared query
  // parameter, header or cookie too (SoundCloud's client_id, VTEX's X-VTEX-API-AppKey).
  const carried = credentialsFor(doc, route, given)
  const namesOf = (pairs: string[]): Set<string> => new Set(pairs.map((pair) => decodeURIComponent(pair.split('=')[0])))
  const carriedIn = { query: namesOf(carried.query), header: new Set(Object.keys(carried.headers)), cookie: namesOf(carried.cookies), path: new Set<string>() }
  const carriesCredentials = (p: ParameterSpec): boolean => carriedIn[p.in].has(p.in === 'header' ? p.name.toLowerCase() : p.name)
  const wrongCredentials = wrongCredentialsFor(doc, route, given)
  const build = (values: Values, source: Source, fault?: Fault, omit?: ParameterSpec): Case => {
    const credentials = fault === 'no credentials'
      ? { headers: {}, query: [], cookies: [], secrets: [] }
      : fault === 'wrong credentials' && wrongCredentials !== undefined ? wrongCredentials : credentialsFor(doc, route, given)
    let path = route.path
    const query: string[] = []
    const headers: Record<string, string> = {}
    const cookies: string[] = []
    parameters.forEach((p, i) => {
      const value = values.parameters[i]
      // A parameter that carries the credentials is theirs to fill, once (CurrencyTick's apikey,
      // a query parameter too); without credentials, it is left out.
      if (value === undefined || p === omit || carriesCredentials(p)) return
      if (p.in === 'path') path = path.replace(`{${p.name}}`, spelled(p, value, encodeURIComponent))
      else if (p.in === 'query') query.push(...queryPairs(p, value))
      else if (p.in === 'header') headers[p.name] = spelled(p, value, (s) => s)
      else cookies.push(...cookiePairs(p, value))
    })
    Object.assign(headers, credentials.headers)
    query.push(...credentials.query)
    cookies.push(...credentials.cookies)
    if (cookies.length > 0) headers.cookie = cookies.join('; ')
    const request: HttpRequest = { method: route.method, path: path + (query.length === 0 ? '' : `?${query.join('&')}`), headers }
    if (values.media !== undefined) {
      const { type, body } = bodyIn(doc, values.media, values.body)
      request.headers['content-type'] = fault === 'undeclared media type' ? UNDECLARED : type
      request.body = body
    }
    return { kind: fault === undefined ? 'valid' : 'invalid', source, ...(fault !== undefined && { fault }), request, values, secrets: credentials.secrets }
  }

  /** The valid request of these values, or why there is none: a path segment that would move the path, a body its schema refuses, a value no URL or header can hold, what the engine refuses. */
  const validCase = (values: Values, source: Source): Case | Error => {
    const moving = parameters.find((p, i) => values.parameters[i] !== undefined && !sendable(p, values.parameters[i]))
    if (moving !== undefined) return new Error(`path parameter ${moving.name}: a segment that would move the path`)
    if (preferred !== undefined && !bodyValid(preferred, values.body)) return new Error('the body breaks its schema, as the engine reads it')
    let sent: Case
    try {
      sent = build(values, source)
    } catch (err) {
      return err as Error
    }
    if (overHead(sent.request)) return new Error(`a request line and headers over ${MAX_HEAD_BYTES} bytes, which servers refuse before the API sees them`)
    if (partCount(sent.request) > MAX_PARTS) return new Error(`a body of more than ${MAX_PARTS} fields or parts, which the engine refuses (413) before reading them`)
    return engineRefuses(sent.request, values) ?? sent
  }

  /** The parameters of `values` whose bounds may be sent: not a credential, nor a cookie. */
  const boundedParameters = (values: Values): number[] => parameters.flatMap((p, i) =>
    values.parameters[i] === undefined || p.in === 'cookie' || carriesCredentials(p) ? [] : [i])
  /** The body of `values` where it is an object of a schema (JSON, a form, multipart), whose properties can be changed one by one. */
  const objectBody = ({ media, body }: Values): Record<string, unknown> | undefined =>
    media?.schema !== undefined && ['json', 'form', 'multipart'].includes(kindOf(concreteType(media.type))) && body !== null && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : undefined
  /** `values` with these changes, each in its place. */
  const changed = (values: Values, changes: Change[]): Values => ({
    ...values,
    parameters: values.parameters.map((value, i) => {
      const change = changes.find((c) => c.at === i)
      return change === undefined ? value : change.value
    }),
    body: changes.reduce((body, { at, value }) => typeof at === 'number' ? body : withValueAt(body, at, value), values.body)
  })
  /**
   * The values of an object body that have bounds: its properties, and in JSON theirs within (an
   * object's properties, a list's first item), breadth first, so that the body's own come first.
   */
  const bodyPlaces = (values: Values): Array<{ path: Array<string | number>, schema: unknown, value: unknown }> => {
    const record = objectBody(values)
    if (record === undefined) return []
    const depth = kindOf(concreteType(values.media!.type)) === 'json' ? MAX_DEPTH : 1
    const places: Array<{ path: Array<string | number>, schema: unknown, value: unknown }> = []
    let level = [{ path: [] as Array<string | number>, schema: values.media!.schema, value: record as unknown }]
    for (let i = 0; i < depth && level.length > 0; i++) {
      level = level.flatMap(({ path, schema, value }) => {
        if (Array.isArray(value)) {
          const items = derefSchema(doc, schema)?.items
          return value.length === 0 || items === null || typeof items !== 'object' ? [] : [{ path: [...path, 0], schema: items, value: value[0] }]
        }
        if (value === null || typeof value !== 'object') return []
        return Object.entries(propertiesOf(doc, schema)).filter(([name]) => Object.hasOwn(value, name)).map(([name, property]) => ({ path: [...path, name], schema: property, value: (value as Record<string, unknown>)[name] }))
      })
      places.push(...level)
    }
    return places
  }
  /**
   * The bounds of `values`' parameters and body values (bounds.ts), each with what it is called; the
   * body's own only past what it takes of properties (one without a required property is a case of its own).
   */
  const edgesIn = (values: Values): Array<{ at: Place, named: string, fits: (value: unknown) => boolean, schema: unknown, edges: Edges }> => {
    const record = objectBody(values)
    const whole = record === undefined ? [] : [{ at: [], named: 'body', fits: () => true, schema: values.media!.schema, edges: { beyond: edgesOf(doc, values.media!.schema, record).beyond.filter(({ breaks }) => !breaks.startsWith('required')) } }]
    return [
      ...boundedParameters(values).flatMap((i) => {
        const { name, schema } = parameters[i]
        const value = values.parameters[i]
        const fits = (value: unknown): boolean => sendable(parameters[i], value)
        const own = { at: i, named: name, fits, schema, edges: edgesOf(doc, schema, value) }
        // A list's items have bounds of their own (an enum of statuses to filter by): past them, its first.
        const items = Array.isArray(value) && value.length > 0 ? derefSchema(doc, schema)?.items : undefined
        if (items === null || typeof items !== 'object') return [own]
        const beyond = edgesOf(doc, items, (value as unknown[])[0]).beyond.map((edge) => ({ ...edge, value: [edge.value, ...(value as unknown[]).slice(1)] }))
        return [own, { at: i, named: `${name}[0]`, fits, schema, edges: { beyond } }]
      }),
      ...whole,
      ...bodyPlaces(values).map(({ path, schema, value }) => ({ at: path, named: nameOf(path), fits: () => true, schema, edges: edgesOf(doc, schema, value, 'é') }))
    ]
  }
  /** Each parameter and body value of `values` moved to that end of its bounds, where its own schema takes it; not one within another that moves, nor a pinned key. */
  const atEdges = (values: Values, end: 'lowest' | 'highest'): Change[] => {
    const changes = edgesIn(values).flatMap(({ at, fits, schema, edges }) => {
      const edge = edges[end]
      if (typeof at === 'number' && pinnedAt.has(at)) return []
      const now = typeof at === 'number' ? values.parameters[at] : valueAt(values.body, at)
      // No parameter sent empty: HTTP and OpenAPI read an empty one in several ways.
      return edge === undefined || (edge === '' && typeof at === 'number') || !fits(edge) || !valid(schema as object, edge) || isDeepStrictEqual(edge, now) ? [] : [{ at, value: edge }]
    })
    return changes.filter(({ at }) => typeof at === 'number' || !changes.some((outer) => typeof outer.at !== 'number' && outer.at.length < at.length && outer.at.every((key, i) => key === at[i])))
  }
  // The parts of a request at its bounds: each change alone, to find the one a refusal is for.
  const partsOf = new WeakMap<Case, Values[]>()

  let base: Values | undefined
  const fixed = (): Case[] => {
    const cases: Case[] = []
    // The document's examples, where it gives any: each parameter's and the body's first valid one, samples for the rest.
    const parameterExamples = parameters.map((p, i) => pinnedAt.has(i) ? undefined : firstValid(p))
    const bodyExample = preferred === undefined ? undefined : examplesOf(doc, preferred).find(({ value }) => bodyValid(preferred, value))
    base = sampled(preferred)
    if (preferred !== undefined && !bodyValid(preferred, base.body)) throw new Unbuildable(`the engine reads the sample's ${preferred.type} body otherwise`)
    // Optional parameters that together pass what a server takes (GSMtasks' lists: some 900 filters): the sample without them.
    if (overHead(build(base, 'sample').request)) base = { ...base, parameters: base.parameters.map((value, i) => parameters[i].required || pinnedAt.has(i) ? value : undefined) }
    const sample = build(base, 'sample')
    const refused = engineRefuses(sample.request, base)
    if (refused !== undefined) throw new Unbuildable(`the engine reads the sample otherwise: ${refused.message}`)
    if (parameterExamples.some((e) => e !== undefined) || bodyExample !== undefined) {
      const example: Values = { parameters: parameterExamples.map((e, i) => e !== undefined ? e.value : base!.parameters[i]), media: preferred, body: bodyExample !== undefined ? bodyExample.value : base.body }
      const sent = build(example, 'example')
      if (engineRefuses(sent.request, example) === undefined) cases.push(sent)
    }
    cases.push(sample)
    // The sample with what is required alone (no optional parameter; a body of its required
    // properties): a service that fails without what a client need not send is a common fault.
    const minimal: Values = {
      ...base,
      parameters: base.parameters.map((value, i) => parameters[i].required || pinnedAt.has(i) ? value : undefined),
      ...(preferred?.schema !== undefined && { body: minimalBody(preferred) ?? base.body })
    }
    if (!isDeepStrictEqual(minimal, base)) {
      const sent = validCase(minimal, 'minimal')
      if (!(sent instanceof Error)) cases.push(sent)
    }
    for (const end of ['lowest', 'highest'] as const) {
      const changes = atEdges(base, end)
      const sent = changes.length === 0 ? undefined : validCase(changed(base, changes), 'bounds')
      if (sent === undefined || sent instanceof Error) continue
      cases.push(sent)
      if (changes.length > 1) partsOf.set(sent, changes.map((change) => changed(base!, [change])))
    }
    // A sample in each other media type the operation takes, where one can be written so that the engine reads it back valid (no form spells an array as the whole body, nor an empty list).
    for (const other of media.filter((m) => m !== preferred)) {
      try {
        const values = sampled(other)
        if (bodyValid(other, values.body)) cases.push(build(values, 'sample'))
      } catch (err) {
        if (!(err instanceof Unbuildable)) throw err
      }
    }
    return cases
  }

  const invalid = (): Case[] => {
    if (base === undefined) return []
    const cases: Case[] = []
    // Of an object body (JSON, a form, multipart), as the engine reads it (a form spells a number
    // as text, which a text property takes): a required property left out; one required only
    // with others (dependentRequired, an if's then: `timezone` with `dueDate`) left out; one of the
    // wrong type, the required first, then those the sample holds (Stripe's parameters are all optional).
    const body = objectBody(base)
    const sentAs = base.media
    if (body !== undefined && sentAs?.schema !== undefined) {
      const required = requiredOf(doc, sentAs.schema)
      const missing = [...required.keys()].map((name) => without(body, name)).find((rest) => !bodyValid(sentAs, rest))
      if (missing !== undefined) cases.push(build({ ...base, body: missing }, 'sample', 'body without a required property'))
      const needed = Object.keys(body).filter((name) => !required.has(name)).map((name) => without(body, name)).find((rest) => !bodyValid(sentAs, rest))
      if (needed !== undefined) cases.push(build({ ...base, body: needed }, 'sample', 'body without a property its others require'))
      const properties = propertiesOf(doc, sentAs.schema)
      const wrong = [...new Set([...required.keys(), ...Object.keys(body)])].map((name) => ({ name, value: wrongFor(doc, properties[name]) })).filter(({ value }) => value !== undefined)
        .map(({ name, value }) => ({ ...body, [name]: value })).find((broken) => !bodyValid(sentAs, broken))
      if (wrong !== undefined) cases.push(build({ ...base, body: wrong }, 'sample', 'body property of the wrong type'))
    }
    // Each parameter and body value with a value past each of its bounds, where the engine refuses it; up to a count.
    const refused = (at: Place, sent: Case): boolean => typeof at === 'number' ? engineRefuses(sent.request, sent.values) !== undefined : !bodyValid(base!.media!, sent.values.body)
    const past = edgesIn(base).map(({ at, named, fits, edges }) => edges.beyond.filter(({ value }) => fits(value))
      .map(({ value, breaks }): Case => ({ ...build(changed(base!, [{ at, value }]), 'sample', typeof at === 'number' ? 'parameter out of its bounds' : 'body property out of its bounds'), breaks: `${named} ${breaks}` }))
      .filter((sent) => refused(at, sent)))
    // Each value's first keyword before any value's second: as many values tried as the count allows.
    const ranks = Math.max(0, ...past.map((cases) => cases.length))
    cases.push(...Array.from({ length: ranks }, (_, rank) => past.flatMap((cases) => cases[rank] ?? [])).flat().slice(0, MAX_PAST))
    // Not one its credentials send too: left out, it would be sent all the same.
    const query = parameters.find((p) => p.in === 'query' && p.required && !(p.shape === 'object' && p.explode) && !carriesCredentials(p))
    if (query !== undefined) cases.push(build(base, 'sample', 'required query parameter missing', query))
    const header = parameters.find((p) => p.in === 'header' && p.required && !carriesCredentials(p))
    if (header !== undefined) cases.push(build(base, 'sample', 'required header missing', header))
    const numeric = parameters.findIndex((p) => p.in === 'path' && p.style === 'simple' && p.shape === 'primitive' && p.contentType === undefined &&
      ['integer', 'number', 'boolean'].includes([derefSchema(doc, p.schema)?.type].flat().join()))
    if (numeric >= 0) cases.push(build(changed(base, [{ at: numeric, value: 'not-a-number' }]), 'sample', 'path parameter of the wrong type'))
    if (base.media !== undefined && matchMedia(media, UNDECLARED) === undefined) {
      const undeclared = build(base, 'sample', 'undeclared media type')
      // An empty body where none is required is no body, whatever type it names (Stripe's GETs take an optional, empty form).
      if (route.body?.required === true || (undeclared.request.body?.length ?? 0) > 0) cases.push(undeclared)
    }
    const schemes = route.security.flatMap((r) => Object.keys(r)).map((name) => doc.components?.securitySchemes?.[name])
    if (!isPublic(route) && !schemes.some((scheme) => scheme?.type === 'mutualTLS')) {
      cases.push(build(base, 'sample', 'no credentials'))
      if (wrongCredentials !== undefined) cases.push(build(base, 'sample', 'wrong credentials'))
    }
    return cases
  }

  const generated = (): ReturnType<Planner['generated']> => {
    const inText = (p: ParameterSpec) => ({ inText: p.contentType === undefined })
    const parameterValues = parameters.map((p, i) => {
      if (pinnedAt.has(i)) return fc.constant(pinnedAt.get(i))
      const value = arbitraryOf(doc, p.schema, inText(p))
      return value === undefined ? undefined : p.required ? value : fc.option(value, { nil: undefined })
    })
    if (parameterValues.some((value, i) => value === undefined && parameters[i].required)) return undefined
    const bodyValue = preferred === undefined ? undefined : arbitraryOf(doc, preferred.schema ?? {}, { inText: false })
    if (preferred !== undefined && bodyValue === undefined) return undefined
    const values = fc.record({
      parameters: fc.tuple(...parameterValues.map((value) => value ?? fc.constant(undefined))),
      body: bodyValue ?? fc.constant(undefined)
    }).map(({ parameters, body }): Values => ({ parameters, media: preferred, body }))
    const request = (drawn: Values): Case | undefined => {
      const sent = validCase(drawn, 'generated')
      return sent instanceof Error ? undefined : sent
    }
    return { values, request }
  }

  const linked = (given: { parameters: Map<number, unknown>, body?: { value: unknown } }): Case | Error => {
    const sample = sampled(preferred)
    return validCase({ ...sample, parameters: sample.parameters.map((value, i) => given.parameters.has(i) ? given.parameters.get(i) : value), ...(given.body !== undefined && { body: given.body.value }) }, 'link')
  }

  const parts = (sent: Case): Case[] => (partsOf.get(sent) ?? []).flatMap((values) => {
    const part = validCase(values, 'bounds')
    return part instanceof Error ? [] : [part]
  })

  return { parameters, fixed, invalid, generated, linked, parts, media: preferred }
}

/** A value the parameter can be sent as: for a path parameter, one spelled as a segment a URL keeps (not empty, nor one that reads as "." or ".." and would move the path). */
export function sendable (p: ParameterSpec, value: unknown): boolean {
  if (p.in !== 'path') return true
  const segment = spelled(p, value, encodeURIComponent)
  return segment !== '' && !/^(\.|%2e){1,2}$/i.test(segment) && !/^[.;]$/.test(segment)
}

/** The value at a place in a body. */
const valueAt = (value: unknown, path: Array<string | number>): unknown => path.reduce((inner: any, key) => inner?.[key], value)

/** A copy of `value` with `replacement` at the place `path` leads to; what is not on the way, shared. */
function withValueAt (value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement
  const [key, ...rest] = path
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  copy[key] = withValueAt(copy[key], rest, replacement)
  return copy
}

/** A place in a body as a reader writes it: author.name, copies[0].barcode. */
const nameOf = (path: Array<string | number>): string => path.reduce<string>((name, key) => typeof key === 'number' ? `${name}[${key}]` : name === '' ? key : `${name}.${key}`, '')

/** The required properties of an object schema, through $refs and allOf, each with its schema; readOnly ones left out (a client does not send them). */
export function requiredOf (doc: OpenApiDocument, schema: unknown): Map<string, unknown> {
  const properties = propertiesOf(doc, schema)
  return new Map([...requiredIn(doc, schema)].filter((name) => derefSchema(doc, properties[name])?.readOnly !== true).map((name) => [name, properties[name]]))
}

/** A value of the wrong type for `schema`: text for a number, a boolean or a list; a number for text. */
function wrongFor (doc: OpenApiDocument, schema: unknown): unknown {
  const types = [derefSchema(doc, schema)?.type].flat().filter(Boolean)
  if (types.length === 0) return undefined
  return types.includes('string') ? (types.includes('number') || types.includes('integer') ? [[]] : 12345) : 'not-of-its-type'
}
