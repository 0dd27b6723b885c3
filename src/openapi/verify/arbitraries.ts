import fc from 'fast-check'
import type { OpenApiDocument } from '../document/document.ts'
import { derefSchema, type JsonSchema } from '../schemas/schema.ts'

// Values of a schema as fast-check arbitraries, so that the verifier sends many values of an
// operation, reproducibly from a seed, and shrinks one that an answer fails on to the smallest
// that still fails. A schema says what a value may be; the arbitrary draws from that (types,
// bounds, lengths, patterns, formats, enums, required and optional properties, items and tuples, the
// branches of a oneOf or anyOf, an allOf of objects merged), and the engine's validator then has
// the last word on each value drawn: what it refuses is not sent as valid. What no arbitrary is
// made for here (a recursion past a few levels, an allOf of other kinds) is left to the sample.
// readOnly properties are never drawn: a client does not send them.

/** Where a value goes: text with structure of its own (a parameter's list, say) keeps to letters and digits, so that no separator of a style is drawn into it. */
export interface Drawing { inText: boolean }

const MAX_DEPTH = 5
// Small values shrink and read well: a string of up to 12 characters, a list of up to 3 items.
const MAX_STRING = 12
const MAX_ITEMS = 3
const LETTERS_AND_DIGITS = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')
const date = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })

/**
 * An instant at a UTC offset of whole quarter hours, as RFC 3339 allows (`…T05:30:00.000+05:30`;
 * `Z` where it is 0, which it shrinks to): a service that drops the offset keeps another instant.
 */
const instant = (): fc.Arbitrary<string> => fc.tuple(date, fc.integer({ min: -48, max: 56 })).map(([d, quarters]) => {
  if (quarters === 0) return d.toISOString()
  const minutes = Math.abs(quarters) * 15
  const offset = `${quarters < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
  return new Date(d.getTime() + quarters * 900_000).toISOString().slice(0, 23) + offset
})

/** An http or https URL of a domain and a short path: fast-check's webUrl() takes 140 MiB to make. */
const url = (): fc.Arbitrary<string> => fc.tuple(fc.constantFrom('http', 'https'), fc.domain(), fc.array(fc.string({ unit: LETTERS_AND_DIGITS, minLength: 1, maxLength: 8 }), { maxLength: 3 }))
  .map(([scheme, host, path]) => `${scheme}://${host}/${path.join('/')}`)

// Each made when first asked for.
const FORMATS: Record<string, () => fc.Arbitrary<unknown>> = {
  email: () => fc.emailAddress(),
  'idn-email': () => fc.emailAddress(),
  uuid: () => fc.uuid(),
  ipv4: () => fc.ipV4(),
  ipv6: () => fc.ipV6(),
  uri: url,
  url,
  iri: url,
  hostname: () => fc.domain(),
  'idn-hostname': () => fc.domain(),
  'date-time': instant,
  date: () => date.map((d) => d.toISOString().slice(0, 10)),
  time: () => date.map((d) => `${d.toISOString().slice(11, 19)}Z`),
  byte: () => fc.base64String({ maxLength: 16 }),
  binary: () => fc.string({ maxLength: MAX_STRING })
}
const made = new Map<string, fc.Arbitrary<unknown>>()
// A pattern's arbitrary, made once however many schemas write it (GitHub's description: some 0.6 s
// of the verifier's 19 s of CPU went to making them again); null for one JavaScript cannot read.
const byPattern = new Map<string, fc.Arbitrary<string> | null>()

function matching (pattern: string): fc.Arbitrary<string> | null {
  if (!byPattern.has(pattern)) {
    let arbitrary: fc.Arbitrary<string> | null = null
    try {
      arbitrary = fc.stringMatching(new RegExp(pattern, 'u'))
    } catch {} // a pattern JavaScript cannot read: the lengths, and the validator
    byPattern.set(pattern, arbitrary)
  }
  return byPattern.get(pattern)!
}

/** An arbitrary of the values `schema` describes, or undefined where none is made here. */
export function arbitraryOf (doc: OpenApiDocument, schema: unknown, drawing: Drawing, depth = 0): fc.Arbitrary<unknown> | undefined {
  if (depth > MAX_DEPTH) return undefined
  const s = derefSchema(doc, schema)
  if (s === true || s === undefined || s === null || typeof s !== 'object') return fc.constant('value')
  if ('const' in s) return fc.constant(s.const)
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...s.enum)
  if (Array.isArray(s.allOf)) {
    const merged = mergedObjects(doc, s)
    return merged === undefined ? undefined : arbitraryOf(doc, merged, drawing, depth + 1)
  }
  const branches: unknown[] | undefined = s.oneOf ?? s.anyOf
  if (Array.isArray(branches)) {
    const arbitraries = branches.map((branch) => arbitraryOf(doc, branch, drawing, depth + 1)).filter((a) => a !== undefined)
    return arbitraries.length === 0 ? undefined : fc.oneof(...arbitraries)
  }
  const types = [s.type ?? (s.properties !== undefined ? 'object' : s.items !== undefined ? 'array' : undefined)].flat().filter((t) => t !== undefined)
  if (types.length === 0) return fc.constant('value')
  const arbitraries = types.map((type: string) => ofType(doc, s, type, drawing, depth)).filter((a) => a !== undefined)
  return arbitraries.length === 0 ? undefined : arbitraries.length === 1 ? arbitraries[0] : fc.oneof(...arbitraries)
}

function ofType (doc: OpenApiDocument, s: JsonSchema, type: string, drawing: Drawing, depth: number): fc.Arbitrary<unknown> | undefined {
  switch (type) {
    // No style spells null in text: a parameter's value is drawn from its other types.
    case 'null': return drawing.inText ? undefined : fc.constant(null)
    case 'boolean': return fc.boolean()
    case 'integer': return integers(s)
    case 'number': return s.multipleOf !== undefined ? integers(s) : fc.double({ ...bounds(s), noNaN: true, noDefaultInfinity: true })
    case 'string': return strings(s, drawing)
    case 'array': {
      // A tuple (3.1's prefixItems): each position drawn from its own schema, then the rest from
      // items, none where items is false.
      const prefix = (Array.isArray(s.prefixItems) ? s.prefixItems : []).map((item: unknown) => arbitraryOf(doc, item, drawing, depth + 1))
      const items = s.items === false ? undefined : arbitraryOf(doc, s.items ?? {}, drawing, depth + 1)
      if (prefix.includes(undefined) || (items === undefined && s.items !== false)) return undefined
      const minLength = Math.max(0, (typeof s.minItems === 'number' ? s.minItems : 0) - prefix.length)
      const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems - prefix.length : MAX_ITEMS, minLength + MAX_ITEMS))
      const rest = items === undefined ? fc.constant([]) : s.uniqueItems === true ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength, maxLength })
      return prefix.length === 0 ? rest : fc.tuple(fc.tuple(...prefix as Array<fc.Arbitrary<unknown>>), rest).map(([head, tail]) => [...head, ...tail])
    }
    case 'object': {
      const required = new Set<string>(Array.isArray(s.required) ? s.required : [])
      const fields: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
        if (derefSchema(doc, property)?.readOnly === true) continue
        const value = arbitraryOf(doc, property, drawing, depth + 1)
        if (value !== undefined) fields[name] = value
        else if (required.has(name)) return undefined
      }
      // Plain objects, as JSON.parse makes: fast-check's without a prototype stop Ajv's deep
      // equality (uniqueItems, enum), which calls their valueOf, and so the whole run.
      return fc.record(fields, { requiredKeys: Object.keys(fields).filter((name) => required.has(name)), noNullPrototype: true })
    }
    default: return undefined
  }
}

/** A bound as JSON Schema 2020-12 writes it, or draft 4's boolean exclusive bounds. */
function bounds (s: JsonSchema): { min?: number, max?: number } {
  const min = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : s.minimum
  const max = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : s.maximum
  return { ...(typeof min === 'number' && { min }), ...(typeof max === 'number' && { max }) }
}

// The range format int32 gives an integer (the validator refuses one beyond it), within any bound of its own.
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 }

function integers (s: JsonSchema): fc.Arbitrary<number> {
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : 1
  let { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds(s)
  if (s.format === 'int32') [min, max] = [Math.max(min, INT32.min), Math.min(max, INT32.max)]
  const from = Math.ceil(Math.max(min, Number.MIN_SAFE_INTEGER) / step)
  const to = Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER) / step)
  if (from > to) return fc.constant(min)
  // Exclusive bounds are left to the validator, which refuses the value on one.
  return fc.integer({ min: Math.max(from, Number.MIN_SAFE_INTEGER), max: Math.min(to, Number.MAX_SAFE_INTEGER) }).map((n) => n * step)
}

function strings (s: JsonSchema, drawing: Drawing): fc.Arbitrary<unknown> {
  const format = typeof s.format === 'string' && Object.hasOwn(FORMATS, s.format) ? s.format : undefined
  if (format !== undefined) {
    if (!made.has(format)) made.set(format, FORMATS[format]())
    return made.get(format)!
  }
  const patterned = typeof s.pattern === 'string' ? matching(s.pattern) : null
  if (patterned !== null) return patterned
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0
  const maxLength = Math.max(minLength, Math.min(typeof s.maxLength === 'number' ? s.maxLength : MAX_STRING, minLength + MAX_STRING))
  return fc.string({ minLength, maxLength, unit: drawing.inText ? LETTERS_AND_DIGITS : 'grapheme' })
}

/** An allOf of object schemas as one object schema: their properties and required names together; undefined for an allOf of anything else. */
function mergedObjects (doc: OpenApiDocument, s: JsonSchema, seen = new Set<unknown>()): JsonSchema | undefined {
  if (seen.has(s)) return undefined
  seen.add(s)
  const merged: JsonSchema = { type: 'object', properties: { ...s.properties }, required: [...(Array.isArray(s.required) ? s.required : [])] }
  for (const part of s.allOf ?? []) {
    const branch = derefSchema(doc, part)
    if (branch === null || typeof branch !== 'object') return undefined
    const object = Array.isArray(branch.allOf) ? mergedObjects(doc, branch, seen) : branch
    if (object === undefined || object.oneOf !== undefined || object.anyOf !== undefined || (object.type !== undefined && object.type !== 'object')) return undefined
    Object.assign(merged.properties, object.properties)
    if (Array.isArray(object.required)) merged.required.push(...object.required)
  }
  return merged
}
