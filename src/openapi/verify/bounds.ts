import type { OpenApiDocument } from '../document/document.ts'
import { propertiesOf, requiredIn } from '../routes/resources.ts'
import { derefSchema } from '../schemas/schema.ts'

// The edges of what a schema takes, as Schemathesis' coverage phase sends them: a value at each end
// of its bounds (a name as long as its maxLength, a limit at its maximum), valid, and a value of
// its own type just past one (a bound, a length, a count of items, an enum, a format, a pattern;
// an object without a property it requires, or with one it does not take), invalid. An
// off-by-one check, or a bound never checked, is a common fault, and values drawn at random seldom
// reach a bound. Each is only a candidate: the caller keeps one only where the engine's validator
// agrees, so a keyword read wrongly here costs a request not sent, never a false alarm.

/** Values near `valid` (a value the schema takes): at its lowest and highest bounds, and past one, each with the keyword it breaks. */
export interface Edges { lowest?: unknown, highest?: unknown, beyond: Array<{ value: unknown, breaks: string }> }

// A text no format the engine checks takes.
const NO_FORMAT = 'not-of-its-format'
// Where a valid text's last character goes, most patterns refuse it: anchored, of letters and digits.
const OFF_PATTERN = '~'
// The name of a property no schema declares, tried in turn.
const UNDECLARED = ['unexpected', 'unexpected_property', 'x-verify-unexpected']
// A value at or past a bound is made only of a length or a count under this, and kept only
// where its JSON is no larger than this: a maxItems of 5,000 objects is a body no service need take.
const MAX_LENGTH = 10_000
const MAX_BYTES = 16 * 1024

/**
 * `text`: what a free text (no pattern, no format) at its longest is made of. A body's is not
 * ASCII ('é', two bytes in UTF-8, one character): a service that counts bytes for a maxLength, or
 * fails on text outside ASCII, is found at a bound it should take. A parameter's is ASCII: a header
 * carries no other.
 */
export function edgesOf (doc: OpenApiDocument, schema: unknown, valid: unknown, text = 'x'): Edges {
  const s = derefSchema(doc, schema)
  const edges: Edges = { beyond: [] }
  if (s === null || typeof s !== 'object') return edges
  const past = (value: unknown, breaks: string): void => { edges.beyond.push({ value, breaks }) }
  const small = (value: unknown): boolean => JSON.stringify(value).length <= MAX_BYTES
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    past(typeof valid === 'number' ? Math.max(...s.enum.filter((v: unknown) => typeof v === 'number'), 0) + 1 : 'not-one-of-its-values', 'enum')
  }
  if (typeof valid === 'number') {
    // Exclusive bounds as 3.1 gives them (the engine reads a 3.0 document upgraded): a number of their own.
    // One step inside an exclusive bound is a value only for an integer.
    const integral = Number.isInteger(valid)
    if (typeof s.maximum === 'number') {
      edges.highest = s.maximum
      past(s.maximum + 1, 'maximum')
    }
    if (typeof s.exclusiveMaximum === 'number') {
      if (integral) edges.highest = s.exclusiveMaximum - 1
      past(s.exclusiveMaximum, 'exclusiveMaximum')
    }
    if (typeof s.minimum === 'number') {
      edges.lowest = s.minimum
      past(s.minimum - 1, 'minimum')
    }
    if (typeof s.exclusiveMinimum === 'number') {
      if (integral) edges.lowest = s.exclusiveMinimum + 1
      past(s.exclusiveMinimum, 'exclusiveMinimum')
    }
    if (typeof s.multipleOf === 'number') past(valid + s.multipleOf / 2, 'multipleOf')
  }
  if (typeof valid === 'string') {
    if (typeof s.maxLength === 'number' && s.maxLength < MAX_LENGTH) {
      edges.highest = (s.pattern === undefined && s.format === undefined ? text : 'x').repeat(s.maxLength)
      past('x'.repeat(s.maxLength + 1), 'maxLength')
    }
    if (typeof s.minLength === 'number') {
      edges.lowest = 'x'.repeat(s.minLength)
      if (s.minLength > 0) past('x'.repeat(s.minLength - 1), 'minLength')
    }
    if (typeof s.format === 'string') past(NO_FORMAT, `format ${s.format}`)
    if (typeof s.pattern === 'string') past(`${valid.slice(0, -1)}${OFF_PATTERN}`, 'pattern')
  }
  if (Array.isArray(valid) && valid.length > 0) {
    const padded = (length: number): unknown[] => Array.from({ length }, (_, i) => valid[i % valid.length])
    if (typeof s.maxItems === 'number' && s.maxItems < MAX_LENGTH && small(padded(s.maxItems + 1))) {
      if (s.uniqueItems !== true) edges.highest = padded(s.maxItems)
      past(padded(s.maxItems + 1), 'maxItems')
    }
    if (typeof s.minItems === 'number') {
      if (s.minItems <= valid.length) edges.lowest = valid.slice(0, s.minItems)
      if (s.minItems > 0) past(valid.slice(0, s.minItems - 1), 'minItems')
    }
    if (s.uniqueItems === true) past([valid[0], ...valid], 'uniqueItems')
  }
  if (valid !== null && typeof valid === 'object' && !Array.isArray(valid)) {
    const required = [...requiredIn(doc, s)].find((name) => typeof name === 'string' && Object.hasOwn(valid, name))
    if (required !== undefined) past(without(valid, required), `required (${required})`)
    if (s.additionalProperties === false || s.unevaluatedProperties === false) {
      const declared = propertiesOf(doc, s)
      const extra = UNDECLARED.find((name) => !Object.hasOwn(declared, name) && !Object.hasOwn(valid, name))
      if (extra !== undefined) past({ ...valid, [extra]: 'x' }, `${s.additionalProperties === false ? 'additionalProperties' : 'unevaluatedProperties'} (${extra})`)
    }
  }
  return edges
}

/** An object without one of its properties. */
export function without (object: object, name: string): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...object }
  delete rest[name]
  return rest
}
