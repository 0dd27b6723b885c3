import type { ValidateFunction } from 'ajv/dist/2020.js'
import { validateHeaderName, validateHeaderValue } from 'node:http'
import Negotiator from 'negotiator'
import { concreteType, kindOf, matchMedia, type BodyKind } from '../requests/bodies.ts'
import { DocumentError } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { AnyHandler, HandlerInput } from '../routes/register.ts'
import { responseFor, type Answer } from '../answers/responses.ts'
import type { MediaSpec, ResponseSpec, RouteSpec } from '../routes/routes.ts'
import { validSample } from '../schemas/samples.ts'
import { examplesOf, type Example } from '../schemas/examples.ts'
import { writeOnlyIn } from '../schemas/schema.ts'
import { errorsText, type Validators } from '../schemas/validation.ts'
import { namedExamples } from './named-examples.ts'
import { inferResources, type Inference } from '../routes/resources.ts'
import { stateful } from './stateful.ts'
import type { State } from './state.ts'

/** A validator that passes anything: for what has no schema to be checked by. */
const ANY = Object.assign(() => true, { errors: null }) as unknown as ValidateFunction

// A handler for every operation of any document, answering from the document itself, as Prism
// and openapi-backend do: the operation's first success (or, with `Prefer: code=404`, another
// declared status), in the media type the client's Accept prefers, with the example the document
// gives (or, with `Prefer: example=name`, the one of that name), else a sample made from the schema
// by Redocly's openapi-sampler; with the declared headers, from their examples or schemas. An
// example or a sample is served only when it is valid against its schema: the examples that
// contradict theirs are named once (checkExamples), and a sample that breaks its schema is named
// when first made. The requests reach these handlers through the same checks as the service's.
// A declared header that only the connection may set (RFC 9110 §7.6.1), or that says how the body
// is framed or encoded when the mock does neither (descriptions captured from traffic declare
// Transfer-Encoding: chunked, Content-Encoding: gzip), is left out, and so is a value HTTP cannot
// carry: both named once, when the examples are checked at start.
// Before all that, unless `Prefer` asks: with a state, an operation on a resource the document
// describes answers from what clients wrote (resources.ts, stateful.ts); else a request that
// matches a named example is answered with the response example of its name (named-examples.ts).

/** What the mock tells about the document: an example, a sample or a header it will not serve, and why. */
export type Report = (message: string) => void

const CONNECTION_HEADERS = new Set(['connection', 'proxy-connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'content-encoding'])

/** Prefer: code=404, example=name (RFC 7240's preferences, as Prism reads them). */
function preferences (header: unknown): { code?: number, example?: string } {
  const out: { code?: number, example?: string } = {}
  for (const item of String(header ?? '').split(/[,;]/)) {
    const [key, value] = item.split('=').map((part) => part.trim().replace(/^"(.*)"$/, '$1'))
    if (key === 'code' && /^[1-5]\d\d$/.test(value)) out.code = Number(value)
    if (key === 'example' && value !== undefined) out.example = value
  }
  return out
}

/** The status an answer of this Response Object has: its own, its range's first (200 for 2XX), 200 for default. */
const statusOf = (response: ResponseSpec, wanted?: number): number => wanted ?? (response.status === 'default' ? 200 : Number(response.status.replace('XX', '00')))

/**
 * The operation's answer when the client asks for none: its first success, else the first it
 * declares but a 1xx (101, a WebSocket handshake: the mock switches no protocol, and a 101 with
 * nothing after it would hold its client until its timeout).
 */
function usual (route: RouteSpec): ResponseSpec | undefined {
  const order = (status: string) => status === 'default' ? 3 : status.startsWith('2') ? (status.endsWith('XX') ? 1 : 0) : 4
  return [...route.responses].filter((r) => !r.status.startsWith('1')).sort((a, b) => order(a.status) - order(b.status) || a.status.localeCompare(b.status))[0]
}

export interface Mock {
  handlers: Record<string, AnyHandler>
  /** The resources remembered, and what looked like one but is not; none when stateless. */
  inference: Inference
  /** Checks every example of the document against its schema, naming once each one that contradicts it, and each header left out; a little at a time, so that requests are answered meanwhile. */
  checkExamples: () => Promise<{ examples: number, invalid: number }>
  /** The headers an answer of `response` carries: its examples', else values of their schemas. */
  headersOf: (route: RouteSpec, response: ResponseSpec) => Record<string, string>
}

// How the mock writes an answer of a media type: a range (*/*, application/*+json) as the type it answers in.
const kindOfAnswer = (media: MediaSpec): BodyKind => kindOf(concreteType(media.type))

export function mock (doc: OpenApiDocument, routes: RouteSpec[], validators: Validators, scanning: () => Validators, report: Report, state?: State): Mock {
  // Whether each example (by media and name) or sample may be served: checked once.
  const verdicts = new WeakMap<MediaSpec, Map<string, boolean>>()
  const samples = new WeakMap<MediaSpec, { value: unknown } | null>()
  const validating = new WeakMap<MediaSpec, ValidateFunction>()
  /** The validator of what the media type answers. */
  const validatorOf = (media: MediaSpec, using = validators): ValidateFunction => {
    if (media.schema === undefined || kindOfAnswer(media) !== 'json') return ANY
    if (using !== validators) return using.response(media.schema)
    let validate = validating.get(media)
    if (validate === undefined) validating.set(media, validate = validators.response(media.schema))
    return validate
  }
  /** Whether an answer's value keeps to its schema, and where not: valid, and no writeOnly property in it. */
  const check = (media: MediaSpec, value: unknown, using?: Validators): { valid: boolean, why: string } => {
    const validate = validatorOf(media, using)
    if (!validate(value)) return { valid: false, why: errorsText(validate.errors) }
    const writeOnly = kindOfAnswer(media) === 'json' ? writeOnlyIn(doc, media.schema, value, using ?? validators) : undefined
    return { valid: writeOnly === undefined, why: writeOnly === undefined ? '' : `${writeOnly} is writeOnly, never sent` }
  }
  const where = (route: RouteSpec, response: ResponseSpec, media: MediaSpec) => `${route.method} ${route.path} ${response.status} ${media.type}`
  const servable = (route: RouteSpec, response: ResponseSpec, media: MediaSpec, example: Example, using = validators): boolean => {
    let byName = verdicts.get(media)
    if (byName === undefined) verdicts.set(media, byName = new Map())
    let verdict = byName.get(example.name)
    if (verdict === undefined) {
      const { valid, why } = check(media, example.value, using)
      if (!valid) report(`${where(route, response, media)}: the example "${example.name}" contradicts its schema (${why}); it is not served`)
      byName.set(example.name, verdict = valid)
    }
    return verdict
  }
  const sampled = (route: RouteSpec, response: ResponseSpec, media: MediaSpec): unknown => {
    if (!samples.has(media)) {
      const made = validSample(doc, media.schema, validatorOf(media), { direction: 'response', xml: media.type.endsWith('xml') })
      if (made !== undefined && !made.valid) report(`${where(route, response, media)}: no sample made from the schema is valid against it; the closest is served`)
      samples.set(media, made ?? null)
    }
    return samples.get(media)?.value
  }
  const bodyOf = (route: RouteSpec, response: ResponseSpec, media: MediaSpec, wanted?: string): unknown => {
    const examples = examplesOf(doc, media)
    // The one asked for, else the first servable: an example that contradicts its schema is never served.
    const chosen = [...examples.filter((example) => example.name === wanted), ...examples].find((example) => servable(route, response, media, example))
    const value = chosen !== undefined ? chosen.value : media.schema === undefined && kindOfAnswer(media) !== 'json' ? '' : sampled(route, response, media)
    switch (kindOfAnswer(media)) {
      // Serialized here: an answer is what its example or sample is, whatever schema shapes it.
      case 'json': return JSON.stringify(value === undefined ? {} : value)
      case 'bytes': return Buffer.from(typeof value === 'string' ? value : '')
      default: {
        if (typeof value === 'string') return value
        // An XML example written as the data it holds: written in XML by the sampler, as the schema's xml hints say.
        const xml = media.type.endsWith('xml') && media.schema !== undefined ? validSample(doc, { ...media.schema, example: value }, ANY, { direction: 'response', xml: true })?.value : undefined
        return typeof xml === 'string' ? xml : JSON.stringify(value ?? '')
      }
    }
  }
  // Each answer's headers, made once: the same for every request.
  const headerSets = new WeakMap<ResponseSpec, Record<string, string>>()
  const headersOf = (route: RouteSpec, response: ResponseSpec): Record<string, string> => {
    let out = headerSets.get(response)
    if (out !== undefined) return out
    headerSets.set(response, out = {})
    const leftOut = (name: string, why: string) => report(`${route.method} ${route.path} ${response.status}: the header ${name} ${why}; it is left out`)
    for (const [name, header] of Object.entries(response.headers)) {
      if (name.toLowerCase() === 'content-type') continue
      if (CONNECTION_HEADERS.has(name.toLowerCase())) {
        leftOut(name, 'is the connection\'s to say (how the mock frames and encodes its answer), not the document\'s')
        continue
      }
      // The header's example where its schema takes it, else a value of its schema (Apple's ETag: a
      // pattern of 1,002 characters, which "string" is not).
      const valid = header.schema === undefined ? ANY : validators.response(header.schema)
      const examples = [header.example, Object.values<any>(header.examples ?? {})[0]?.value, header.schema?.examples?.[0], header.schema?.example].filter((example) => example !== undefined)
      const given = examples.find((example) => valid(example))
      if (given === undefined && examples.length > 0) report(`${route.method} ${route.path} ${response.status}: the header ${name}'s example contradicts its schema (${errorsText(valid.errors)}); a value of its schema is sent instead`)
      const value = given ?? (header.schema === undefined ? undefined : validSample(doc, header.schema, valid, { direction: 'response' })?.value)
      if (value === undefined || value === null) continue
      const text = Array.isArray(value) ? value.join(',') : typeof value === 'object' ? Object.entries(value).flat().join(',') : String(value)
      try {
        validateHeaderName(name)
        validateHeaderValue(name, text)
        out[name] = text
      } catch {
        leftOut(name, `cannot be sent: ${JSON.stringify(text.slice(0, 80))} holds characters HTTP forbids in a header`)
      }
    }
    return out
  }

  /** The answer `response` gives, in the media type Accept prefers, with the example named `wanted` if it has one. */
  const answerOf = (route: RouteSpec, response: ResponseSpec, status: number, accept: unknown, wanted?: string): Answer => {
    const media = pickMedia(response.media, String(accept ?? ''))
    if (media === undefined || status === 204 || status === 304) return { status, headers: headersOf(route, response) }
    return { status, body: bodyOf(route, response, media, wanted), headers: headersOf(route, response), contentType: concreteType(media.type) }
  }

  const inference: Inference = state === undefined ? { resources: [], bindings: new Map(), skipped: [] } : inferResources(doc, routes)
  const remembering = state === undefined ? undefined : stateful(doc, inference, state, validators, { validatorOf, sampled, headersOf, pickMedia })
  const handlerOf = (route: RouteSpec): AnyHandler => {
    const first = usual(route)
    const matcher = namedExamples(doc, route, [...first === undefined ? [] : [first], ...route.responses.filter((r) => r !== first)])
    const remembered = remembering?.(route)
    return async (input: HandlerInput): Promise<Answer> => {
      const { headers } = input
      const { code: preferred, example } = preferences(headers.prefer)
      // A 1xx asked for is not answered: the mock switches no protocol.
      const code = preferred !== undefined && preferred >= 200 ? preferred : undefined
      if (code === undefined && example === undefined) {
        // What clients wrote first: a create of the document's example is remembered, and read back, as any other.
        const answer = remembered?.(input)
        if (answer !== undefined) return answer
        const matched = matcher?.(input)
        if (matched !== undefined) return answerOf(route, matched.response, statusOf(matched.response), headers.accept, matched.name)
      }
      const response = code === undefined ? first : responseFor(route.responses, code)
      // Nothing declared to answer with: an empty 200; or not the code asked for: that code, empty.
      if (response === undefined) return { status: code ?? 200 }
      return answerOf(route, response, statusOf(response, code), headers.accept, example)
    }
  }

  const handlers: Record<string, AnyHandler> = {}
  for (const route of routes) handlers[route.operationId] = handlerOf(route)

  return {
    handlers,
    inference,
    headersOf,
    async checkExamples () {
      let examples = 0
      let invalid = 0
      // A slice at a time, with the event loop's turn between two, each with validators of its
      // own that are let go after it: a big document's would otherwise all stay compiled.
      const SLICE = 25
      for (let i = 0; i < routes.length; i += SLICE) {
        const own = scanning()
        for (const route of routes.slice(i, i + SLICE)) {
          for (const response of route.responses) {
            headersOf(route, response)
            for (const media of response.media) {
              for (const example of examplesOf(doc, media)) {
                examples++
                try {
                  if (!servable(route, response, media, example, own)) invalid++
                } catch (err) {
                  // A schema that cannot be read (a $ref to nothing): named once; the mock goes on serving the rest.
                  if (!(err instanceof DocumentError)) throw err
                  report(`${where(route, response, media)}: its schema cannot be read (${err.message}); its examples are not served`)
                  invalid++
                  break
                }
              }
            }
          }
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
      return { examples, invalid }
    }
  }
}

/**
 * The declared media type the client's Accept prefers (Negotiator reads it); JSON when it says
 * nothing. A range is answered in its concrete type, so where the document declares that type
 * too, that one shapes the answer, as it shapes what a client reads (matchMedia): gerermesaffaires'
 * download declares a file in `*\/*` and an object in `application/json`.
 */
function pickMedia (declared: MediaSpec[], accept: string): MediaSpec | undefined {
  const fallback = declared.find((m) => kindOfAnswer(m) === 'json') ?? declared[0]
  const type = declared.length <= 1 || accept === '' || accept === '*/*' ? undefined : new Negotiator({ headers: { accept } }).mediaType(declared.map((m) => m.spelled))
  const picked = declared.find((m) => m.spelled === type) ?? fallback
  return picked?.type.includes('*') === true ? matchMedia(declared, concreteType(picked.type)) ?? picked : picked
}
