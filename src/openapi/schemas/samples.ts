import type { ValidateFunction } from 'ajv/dist/2020.js'
import { sample } from 'openapi-sampler'
import RandExpModule from 'randexp'
import type { OpenApiDocument } from '../document/document.ts'
import { pointerToken } from '../document/document-error.ts'
import { propertiesOf, valueIn } from '../routes/resources.ts'
import { errorToMend, isObject, oneOfIn, schemaAt, tokensOf } from './schema-at.ts'
import { derefSchema, standaloneSchema, writeOnlyIn, type JsonSchema } from './schema.ts'

// Values made from a schema that are valid against it: what the mock answers with where the
// document gives no example, and what the tests send. Redocly's openapi-sampler makes the value;
// it prefers a schema's examples and defaults, some of which break their own schemas, and its
// strings follow few patterns and formats. So the sampler is asked in turns (with the optional
// properties and without, then from a copy of the schema without examples and defaults), and each
// value that does not pass is mended where the validator says it breaks: a string made to match
// its pattern (randexp), a format's value, a bound met, an enum's first value. Deterministic: the
// same schema gives the same value.

export interface Sample { value: unknown, valid: boolean }
interface SampleOptions { direction: 'request' | 'response', xml?: boolean, minimal?: boolean }

const MAX_DEPTH = 8
// Values a sample may hold before it is made again shallower: DocuSign's recipients, eight
// references deep, are 1.5 MB of sample, and mending them held the event loop for 9 s.
const MAX_VALUES = 5000
// Mends a value may take: this many, and one more for each value within it (UniCourt's case holds
// 67 date-times, each mended alone), so that a large sample is not given up half mended.
const MAX_MENDS = 40
// Each schema's samples, by its validator and the options: made once, as the same schema gives the
// same value. A large schema takes long to sample (Microsoft Graph's drive, its users and their
// lists eight references deep: a second), and the verifier asks for one again at each request of a chain.
const samples = new WeakMap<object, WeakMap<ValidateFunction, Map<string, Sample | undefined>>>()

/** A valid value of each format JSON Schema and OpenAPI name. */
const FORMATS: Record<string, unknown> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': '/example',
  iri: 'https://example.com/',
  'iri-reference': '/example',
  'uri-template': 'https://example.com/{id}',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  'json-pointer': '/example',
  'relative-json-pointer': '0',
  regex: '^example$',
  byte: 'ZXhhbXBsZQ==',
  int32: 0,
  int64: 0,
  float: 0,
  double: 0
}

const FORMAT_VALUES = new Set(Object.values(FORMATS))

// A CommonJS module whose default export is the class.
const RandExp = ((RandExpModule as unknown as { default?: typeof RandExpModule }).default ?? RandExpModule) as unknown as new (pattern: string) => { randInt: (from: number, to: number) => number, max: number, defaultRange: { subtract: (from: number, to?: number) => void }, gen: () => string }

/** Whether ECMAScript's pattern takes `text`; false for one it cannot read. */
function takes (pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text)
  } catch {
    return false
  }
}

/**
 * A string a pattern takes: the first (each choice its first, each repeat its fewest), the longest
 * (each repeat its most, an open one at most 64), or one drawn at random (an open repeat at most
 * `maxLength`, where given); a brace that is no quantifier read as itself, as ECMAScript reads it.
 * The first and the longest begin and end with no space where the pattern leaves the character
 * open (`.`, `[^/]`): a header's value loses one there on the way (RFC 9110 §5.5).
 */
export function matching (pattern: string, which: 'first' | 'longest' | 'drawn' = 'first', maxLength?: number): string | undefined {
  for (const source of [pattern, pattern.replace(/\{(?!\d+(?:,\d*)?\})/g, '\\{').replace(/(?<!\{\d+(?:,\d*)?)\}/g, '\\}')]) {
    try {
      if (which === 'drawn') {
        const generator = new RandExp(source)
        // A repetition (`+`, `*`) drawn no longer than the string may be: RandExp's own bound is 100.
        if (maxLength !== undefined) generator.max = maxLength
        return generator.gen()
      }
      const first = (spaceless: boolean): string => {
        const generator = new RandExp(source)
        generator.max = 64
        generator.randInt = which === 'longest' ? (_from: number, to: number) => to : (from: number) => from
        if (spaceless) generator.defaultRange.subtract(32)
        return generator.gen()
      }
      const made = first(false)
      if (!/^\s|\s$/.test(made)) return made
      const other = first(true)
      return takes(source, other) ? other : made
    } catch {}
  }
  return undefined
}

const at = (value: unknown, pointer: string): unknown => valueIn(value, tokensOf(pointer))

/** The value with the node at `pointer` replaced (undefined: removed). */
function replaced (value: unknown, pointer: string, by: unknown): unknown {
  const path = tokensOf(pointer)
  if (path.length === 0) return by
  let parent: any = value
  for (const token of path.slice(0, -1)) parent = parent?.[token]
  if (parent === null || typeof parent !== 'object') return value
  if (by === undefined) delete parent[path.at(-1)!]
  else parent[path.at(-1)!] = by
  return value
}

// A date-time (RFC 3339), its fraction of a second apart.
const INSTANT = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/i

/**
 * `text` at least `limit` long: a date-time by zeros in its fraction of a second, which keep its
 * instant and its format (UniCourt's are at least 25 long); else by its own last character, which a
 * pattern's last repeat takes more of (`^[0-9]+$`'s 0).
 */
function longer (text: string, limit: number): string {
  const instant = INSTANT.exec(text)
  if (instant === null) return text.padEnd(limit, text.at(-1) ?? 'a')
  const [, head, fraction = '.', zone] = instant
  return head + fraction.padEnd(limit - head.length - zone.length, '0') + zone
}

/** What mends the value the validator refused at one place; undefined when nothing will. */
function mend (error: NonNullable<ValidateFunction['errors']>[number], current: unknown): { pointer: string, by: unknown } | undefined {
  const { keyword, params, instancePath } = error
  const here = { pointer: instancePath }
  switch (keyword) {
    case 'pattern': return { ...here, by: matching(params.pattern) }
    case 'format': return params.format in FORMATS ? { ...here, by: FORMATS[params.format] } : undefined
    case 'enum': return { ...here, by: params.allowedValues[0] }
    case 'const': return { ...here, by: params.allowedValue }
    case 'minLength': return { ...here, by: longer(String(current ?? ''), params.limit) }
    case 'maxLength': return { ...here, by: String(current ?? '').slice(0, params.limit) }
    case 'minimum': case 'maximum': return { ...here, by: params.limit }
    case 'exclusiveMinimum': return { ...here, by: params.limit + 1 }
    case 'exclusiveMaximum': return { ...here, by: params.limit - 1 }
    case 'multipleOf': return { ...here, by: params.multipleOf }
    case 'maxItems': return Array.isArray(current) ? { ...here, by: current.slice(0, params.limit) } : undefined
    // Items like the first, or, for an empty list, empty objects for the next mends to shape.
    case 'minItems': return Array.isArray(current) ? { ...here, by: Array.from({ length: params.limit }, () => structuredClone(current[0] ?? {})) } : undefined
    // Properties of any name, for the next mends to shape or take away.
    case 'minProperties': return current !== null && typeof current === 'object' ? { ...here, by: { ...current, ...Object.fromEntries(Array.from({ length: params.limit }, (_, i) => [`property${i + 1}`, 'string'])) } } : undefined
    case 'maxProperties': return current !== null && typeof current === 'object' ? { ...here, by: Object.fromEntries(Object.entries(current).slice(0, params.limit)) } : undefined
    case 'uniqueItems': return Array.isArray(current) ? { ...here, by: current.slice(0, 1) } : undefined
    case 'additionalProperties': return { pointer: `${instancePath}/${pointerToken(params.additionalProperty)}`, by: undefined }
    // A discriminator's value, where the object has none or another: the first that chooses a branch.
    case 'discriminator': return params.missingProperty === undefined ? { ...here, by: params.allowed[0] } : { pointer: `${instancePath}/${pointerToken(params.missingProperty)}`, by: params.allowed[0] }
    // A required property the sampler left out (it has no schema, or loops): any value, mended further if its schema wants.
    case 'required': return { pointer: `${instancePath}/${pointerToken(params.missingProperty)}`, by: 'string' }
    case 'type': return { ...here, by: ({ string: 'string', integer: 0, number: 0, boolean: true, null: null, array: [], object: {} } as Record<string, unknown>)[String(params.type).split(',')[0]] }
    default: return undefined
  }
}

/** The value mended until `validate` passes it, or undefined when it cannot be. */
function mended (doc: OpenApiDocument, schema: JsonSchema | undefined, value: unknown, validate: ValidateFunction): unknown {
  let current = structuredClone(value)
  const mends = MAX_MENDS + valuesIn(current)
  const given = new Map<string, Set<string>>()
  for (let i = 0; i < mends; i++) {
    if (validate(current)) return current
    const error = errorToMend(validate.errors)
    const fix = error === undefined ? undefined : error.keyword === 'oneOf' ? setApart(doc, schema, current, error) : mend(error, at(current, error.instancePath))
    if (fix === undefined || (fix.by === undefined && error?.keyword !== 'additionalProperties')) return undefined
    // A property no mend settles, given a value it was given before (a string whose enum lists
    // numbers, as the directory's Shotstack has it), is left out where it may be: what a schema
    // requires comes back.
    const before = given.get(fix.pointer) ?? new Set<string>()
    given.set(fix.pointer, before)
    // Required again after every value it was given failed: no value settles it (SendGrid's
    // message, whose allOf gives an event's bounce_type two enums that share none), so the object
    // cannot be. Where that object is a list's item, the list goes without it.
    if (error!.keyword === 'required' && before.size > 0 && withoutItem(current, error!.instancePath)) continue
    // A format's value its pattern refuses (optimade's version URLs, a uri that ends in /v1): that
    // value with the pattern's match after it, where the pattern takes it (one open at its start).
    const refused = at(current, fix.pointer)
    if (error?.keyword === 'pattern' && typeof refused === 'string' && before.has(JSON.stringify(refused)) && FORMAT_VALUES.has(refused) && takes(error.params.pattern, refused + fix.by)) fix.by = refused + fix.by
    // A pattern's first match its bounds refuse (AWS Location's ^geo:\w*\*?$, at least 5 long): its longest.
    if (error?.keyword === 'pattern' && before.has(JSON.stringify(fix.by))) fix.by = matching(error.params.pattern, 'longest') ?? fix.by
    const again = fix.by !== undefined && before.has(JSON.stringify(fix.by))
    // A list's item given a value it was given before, which failed: no value settles it
    // (Mercedes-Benz's ProductGroup, an object whose enum lists only text), and the list goes without it.
    if (again && withoutItem(current, fix.pointer)) continue
    if (fix.by !== undefined) before.add(JSON.stringify(fix.by))
    current = replaced(current, fix.pointer, again && fix.pointer !== '' && isProperty(current, fix.pointer) ? undefined : fix.by)
  }
  return validate(current) ? current : undefined
}

/**
 * Of an object several branches of a oneOf take (`passingSchemas`), the mend that leaves one of
 * them: a property another declares and the one kept (which names most of the object's members)
 * does not, given a value of a type that property refuses. Branches that require nothing that
 * tells them apart take every object (jumpseller's store status and new store, gerermesaffaires'
 * message and link): a member one of them declares, of the wrong type, tells them apart. Where the
 * one that names most declares every property of the others (Shotstack's video asset and its image
 * asset, a video's properties and more), the next is kept, and one of its own is given so.
 */
export function setApart (doc: OpenApiDocument, schema: JsonSchema | undefined, value: unknown, { instancePath, params }: NonNullable<ValidateFunction['errors']>[number]): { pointer: string, by: unknown } | undefined {
  const object = at(value, instancePath)
  const branches = oneOfIn(doc, schemaAt(doc, schema, value, tokensOf(instancePath)))
  if (!isObject(object) || branches === undefined) return undefined
  const names = (branch: unknown): string[] => Object.keys(propertiesOf(doc, branch))
  const members = (branch: unknown): number => names(branch).filter((name) => name in object).length
  const passing = (params.passingSchemas as number[]).map((index) => branches[index]).sort((a, b) => members(b) - members(a))
  for (const kept of passing) {
    const keptNames = new Set(names(kept))
    for (const other of passing.filter((branch) => branch !== kept)) {
      for (const [name, property] of Object.entries(propertiesOf(doc, other))) {
        const by = keptNames.has(name) || name in object ? undefined : refusedBy(derefSchema(doc, property))
        if (by !== undefined) return { pointer: `${instancePath}/${pointerToken(name)}`, by }
      }
    }
  }
  return undefined
}

// Values of each type a schema may not take, null first: read as "none", it is the least surprising.
const OF_TYPE: Array<[string[], unknown]> = [[['null'], null], [['string'], 'string'], [['number', 'integer'], 0], [['boolean'], false]]

/** A value of a type `schema` does not take; undefined where it names no type. */
function refusedBy (schema: JsonSchema | undefined): unknown {
  const types = [schema?.type].flat()
  if (schema?.nullable === true) types.push('null')
  return types.some((type) => typeof type === 'string') ? OF_TYPE.find(([are]) => !are.some((type) => types.includes(type)))?.[1] : undefined
}

/** `value` without the list's item `pointer` names, where it names one (in place): whether it did. */
function withoutItem (value: unknown, pointer: string): boolean {
  const tokens = tokensOf(pointer)
  const list = valueIn(value, tokens.slice(0, -1))
  if (tokens.length === 0 || !Array.isArray(list)) return false
  list.splice(Number(tokens.at(-1)), 1)
  return true
}

/** Whether `pointer` names a property of an object (not an item of a list) in `value`. */
function isProperty (value: unknown, pointer: string): boolean {
  return isObject(valueIn(value, tokensOf(pointer).slice(0, -1)))
}

/** What `make` makes at the sampler's depth, or, where that holds over MAX_VALUES values, at half the depth, and so on. */
function shallowEnough (make: (depth: number) => unknown): unknown {
  let made = make(MAX_DEPTH)
  for (let depth = MAX_DEPTH / 2; depth >= 1 && valuesIn(made) > MAX_VALUES; depth /= 2) made = make(depth)
  return made
}

/** How many values a value holds, itself and all within it. */
function valuesIn (value: unknown): number {
  return value !== null && typeof value === 'object' ? Object.values(value).reduce((count: number, inner) => count + valuesIn(inner), 1) : 1
}

/** An answer's value without the writeOnly properties an answer never holds: the sampler keeps those it meets past its depth (bkk.hu's, in a list of lists). */
function withoutWriteOnly (doc: OpenApiDocument, schema: JsonSchema | undefined, value: unknown): unknown {
  for (let pointer = writeOnlyIn(doc, schema, value); pointer !== undefined; pointer = writeOnlyIn(doc, schema, value)) replaced(value, pointer, undefined)
  return value
}

/** The schema without examples or defaults, so that the sampler makes its values from the constraints. */
function withoutExamples (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutExamples)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'examples' || key === 'example' || key === 'default') continue
    out[key] = key === 'enum' || key === 'const' ? value : withoutExamples(value)
  }
  return out
}

/**
 * `make`, with console.warn silent while it runs (synchronously): openapi-sampler's `quiet` does
 * not reach all its warnings (a date-time's minLength), and they would be lines of no log's shape
 * on a service's stderr, once for each sample.
 */
function quietly<T> (make: () => T): T {
  const warn = console.warn
  console.warn = () => {}
  try {
    return make()
  } finally {
    console.warn = warn
  }
}

/**
 * A value of `schema` that `validate` passes, else the sampler's first, not valid. `direction`
 * says which properties to leave out: a request's readOnly ones, an answer's writeOnly ones. XML
 * is the sampler's, unchecked. `minimal`: of its required properties alone.
 */
export function validSample (doc: OpenApiDocument, schema: JsonSchema | undefined, validate: ValidateFunction, options: SampleOptions): Sample | undefined {
  if (schema === undefined) return madeSample(doc, schema, validate, options)
  const { direction, xml = false, minimal = false } = options
  let byValidator = samples.get(schema)
  if (byValidator === undefined) samples.set(schema, byValidator = new WeakMap())
  let byOptions = byValidator.get(validate)
  if (byOptions === undefined) byValidator.set(validate, byOptions = new Map())
  const key = `${direction} ${xml} ${minimal}`
  if (!byOptions.has(key)) byOptions.set(key, madeSample(doc, schema, validate, options))
  const made = byOptions.get(key)
  // A copy each time: callers complete and change the values they are given.
  return made === undefined ? undefined : { value: structuredClone(made.value), valid: made.valid }
}

/** validSample's value, made. */
function madeSample (doc: OpenApiDocument, schema: JsonSchema | undefined, validate: ValidateFunction, { direction, xml = false, minimal = false }: SampleOptions): Sample | undefined {
  const skip = direction === 'request' ? { skipReadOnly: true } : { skipWriteOnly: true }
  let first: unknown
  let bare: JsonSchema | undefined
  // A oneOf or anyOf the sampler takes the first branch of, which may match others too: each branch in turn, last.
  const root = derefSchema(doc, schema)
  const branches: unknown[] = root?.oneOf ?? root?.anyOf ?? []
  const attempts = (minimal ? [[false, true], [true, true]] : [[false, false], [false, true], [true, false], [true, true], ...branches.map((_branch, i) => [false, false, i])]) as Array<[boolean, boolean, number?]>
  for (const [stripped, skipNonRequired, branch] of attempts) {
    try {
      if (stripped) bare ??= withoutExamples(standaloneSchema(doc, schema ?? {}, 'serialize')) as JsonSchema
      const from = branch !== undefined ? branches[branch] : stripped ? bare : schema ?? {}
      const made = shallowEnough((maxSampleDepth) => quietly(() => sample(from as object, { ...skip, skipNonRequired, quiet: true, maxSampleDepth, format: xml ? 'xml' : 'json' }, stripped ? bare : doc)))
      if (xml) return { value: made, valid: true }
      const value = direction === 'response' ? withoutWriteOnly(doc, schema, made) : made
      if (first === undefined) first = value
      // The sampler makes null of a schema with properties but no type (an allOf of them): an object is meant.
      const good = mended(doc, schema, value ?? {}, validate)
      if (good !== undefined) return { value: good, valid: true }
    } catch {}
  }
  // A list whose items no value satisfies still takes none.
  if (!xml && validate([])) return { value: [], valid: true }
  return first === undefined ? undefined : { value: first, valid: false }
}
