import { Ajv2020, type AnySchema, type ErrorObject, type KeywordDefinition, type ValidateFunction } from 'ajv/dist/2020.js'
import formatsPlugin from 'ajv-formats'
import { InexactNumberError, ValidationError } from '../../errors.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { documentPattern } from './patterns.ts'
import { SchemaRegistry, type JsonSchema, type SchemaView } from './schema.ts'

// Requests and answers are validated with the dialect OpenAPI 3.1 declares, JSON Schema 2020-12
// (3.0 documents are upgraded to it as they are read), with the formats OpenAPI names. Bodies
// are never coerced; values that arrive as text (parameters, form fields) are, as their schema
// says: a number, a boolean (lists are made lists as they are read, parameters.ts, so that a
// oneOf of a string and a list of them takes one or the other, not both). A default is what the schema says of an absent value, not a value: none is filled in. Documents
// come as their authors wrote them: a keyword or format a validator does not know constrains
// nothing, and a pattern ECMAScript refuses in Unicode mode is read without it.

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const DECIMAL_INTEGER = /^-?(?:0|[1-9]\d*)$/
const INT64_MESSAGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`

const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default

/** True for a value that is exactly an int64: a safe-integer number, or a bigint in range. */
export function isInt64 (value: unknown): boolean {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX
  return Number.isSafeInteger(value)
}

/** A copy of a schema, each of its objects (innermost first) as `rule` makes it. */
function rewritten (node: any, rule: (node: Record<string, any>) => Record<string, any>): any {
  if (Array.isArray(node)) return node.map((item) => rewritten(item, rule))
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, any> = {}
  for (const [key, value] of Object.entries(node)) out[key] = rewritten(value, rule)
  return rule(out)
}

const typesOf = (node: Record<string, any>): unknown[] => Array.isArray(node.type) ? node.type : [node.type]

/** The node with `check` in place of its types `replaced`: alone, or beside its other types. */
function checkedInstead (node: Record<string, any>, replaced: string[], check: Record<string, unknown>): Record<string, any> {
  const { type, ...rest } = node
  const others = typesOf(node).filter((t) => !replaced.includes(t as string))
  if (others.length === 0) return { ...rest, ...check }
  return { ...rest, anyOf: [check, { type: others }] }
}

/**
 * Integers beyond 2^53 reach the validator as bigint (see http/json-body.ts), which JSON Schema's
 * `type: integer` cannot accept. So wherever a schema says `format: int64`, its integer type
 * is checked by the int64 keyword instead, which accepts number and bigint alike.
 */
function int64Checked (node: Record<string, any>): Record<string, any> {
  if (node.format !== 'int64' || !typesOf(node).includes('integer')) return node
  const { format, ...rest } = node
  return checkedInstead(rest, ['integer'], { int64: true })
}

/**
 * An answer is read exactly (http/json-body.ts, parseExactJson): an integer past 2^53 arrives as a
 * bigint there, one the schema does not call int64 too (NetBox bounds its integers by ±2^63, EVE
 * Online's positions are such doubles). In an answer it is the number it is: `type: integer` and
 * `number` are checked by the numeric keyword, which takes a bigint as well. A number's keywords
 * (its bounds) are not checked on a bigint, as for an int64. A request's JSON is read so too, and
 * checked so; what it may hold past 2^53, exactNumber (below) decides.
 */
function numericChecked (node: Record<string, any>): Record<string, any> {
  const types = typesOf(node)
  if (!types.includes('number') && !types.includes('integer')) return node
  const { type, ...rest } = node
  return { ...rest, numeric: types }
}

// JSON Schema's types other than the numeric ones, as `type` reads a value.
const IS_TYPE: Record<string, (data: unknown) => boolean> = {
  null: (data) => data === null,
  string: (data) => typeof data === 'string',
  boolean: (data) => typeof data === 'boolean',
  array: Array.isArray,
  object: (data) => typeof data === 'object' && data !== null && !Array.isArray(data)
}

/** `type` with a bigint taken for a number or an integer; its error as `type`'s own ("must be number,null"). */
const numericKeyword: KeywordDefinition = {
  keyword: 'numeric',
  schemaType: 'array',
  errors: true,
  validate: function validate (types: string[], data: unknown) {
    if (typeof data === 'bigint' || (types.includes('number') ? Number.isFinite(data) : Number.isInteger(data))) return true
    if (types.some((type) => IS_TYPE[type]?.(data) === true)) return true
    ;(validate as any).errors = [{ keyword: 'type', message: `must be ${types.join(',')}`, params: { type: types.join(',') } }]
    return false
  }
}

/**
 * For values that arrive as text, which Ajv converts unchecked: "1e999999" to Infinity, and
 * "9007199254740993" to the integer ...992, rounded. A number read from text must be finite, and
 * an integer the schema does not call int64 (kept exact, above) must fit a number exactly. So
 * must one of a request's JSON, which arrives as a bigint past 2^53 (read exactly, as an answer
 * is: numericChecked lets it past the type), whichever way it is spelled (1e20 too); where the
 * schema says `number`, a bigint is the double any JSON parser reads, as a handler typed `number`
 * expects.
 */
function exactNumberChecked (node: Record<string, any>): Record<string, any> {
  const types = typesOf(node)
  if (types.includes('number')) return { ...node, exactNumber: 'number' }
  return types.includes('integer') ? { ...node, exactNumber: 'integer' } : node
}

const exactNumberKeyword: KeywordDefinition = {
  keyword: 'exactNumber',
  schemaType: 'string',
  modifying: true,
  errors: true,
  validate: function validate (kind: string, data: unknown, _parent?: unknown, ctx?: any) {
    if (typeof data === 'bigint' && kind === 'number') {
      if (ctx?.parentData !== undefined) ctx.parentData[ctx.parentDataProperty] = Number(data)
      return true
    }
    if (typeof data !== 'number' && typeof data !== 'bigint') return true
    const message = typeof data === 'number' && !Number.isFinite(data)
      ? 'must be a finite number'
      : kind === 'integer' && !Number.isSafeInteger(data) ? `must be an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER} (one beyond would be rounded; format: int64 keeps it exact)` : undefined
    if (message === undefined) return true
    ;(validate as any).errors = [{ keyword: 'exactNumber', message, params: {} }]
    return false
  }
}

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null'])

/**
 * For values that arrive as text. Ajv converts a value in place as it tries each branch of a
 * union, so under `oneOf: [{type: integer}, {type: string}]` the text "5" is made 5 by the first
 * branch and "5" again by the second, and matches both: a valid request refused; under anyOf it
 * keeps none of a branch's conversion, so Stripe's `anyOf: [{type: number}, {enum: [""]}]` (a
 * number, or "" to unset it) reads "5" as the text "5". Text can be read as more than one
 * primitive type; the first branch that reads it is what the document means. So a oneOf or anyOf
 * whose branches are of primitive types, not all one, is checked by x-text-union instead; a
 * branch's type is read through its $ref (`typeOf`). A oneOf still takes one branch of a type:
 * PeerTube's video id, `oneOf: [id (an integer), UUIDv4, shortUUID (any text)]`, reads /videos/42
 * as the integer, and a UUID, which both of its texts take, not at all.
 */
const textUnion = (typeOf: (branch: unknown) => unknown) => (node: Record<string, any>): Record<string, any> => {
  for (const union of ['oneOf', 'anyOf']) {
    const branches = node[union]
    if (!Array.isArray(branches)) continue
    const types = branches.map(typeOf)
    if (types.length < 2 || !types.every((type) => typeof type === 'string' && PRIMITIVES.has(type)) || new Set(types).size < 2) continue
    const { [union]: _, ...rest } = node
    return { ...rest, 'x-text-union': { branches, types, oneOf: union === 'oneOf' } }
  }
  return node
}

/**
 * x-text-union (textUnion): the branches in turn, each on its own copy of the text; the first that
 * reads it gives the value, where in a oneOf no other branch of its type reads it too.
 */
const textUnionKeyword: KeywordDefinition = {
  keyword: 'x-text-union',
  schemaType: 'object',
  modifying: true,
  errors: true,
  compile ({ branches, types, oneOf }: { branches: AnySchema[], types: string[], oneOf: boolean }, _parent, it) {
    const ajv = it.self
    const union = oneOf ? 'oneOf' : 'anyOf'
    let compiled: ValidateFunction[] | undefined
    const validate = (data: unknown, ctx?: any): boolean => {
      // Each branch under a property of its own holder, so that what it converts is kept there.
      compiled ??= branches.map((branch) => ajv.compile({ type: 'object', properties: { value: branch } }))
      const reads = (i: number, holder = { value: data }): boolean => compiled![i](holder)
      for (let i = 0; i < compiled.length; i++) {
        const holder = { value: data }
        if (!reads(i, holder)) continue
        if (oneOf && types.some((type, other) => other > i && type === types[i] && reads(other))) break
        if (ctx?.parentData !== undefined) ctx.parentData[ctx.parentDataProperty] = holder.value
        return true
      }
      validate.errors = [{ instancePath: ctx?.instancePath ?? '', keyword: union, params: {}, message: `must match ${oneOf ? 'exactly one schema' : 'a schema'} in ${union}` }]
      return false
    }
    validate.errors = null as unknown
    return validate as any
  }
}

function int64Keyword (coerceStrings: boolean): KeywordDefinition {
  return {
    keyword: 'int64',
    schemaType: 'boolean',
    modifying: coerceStrings,
    errors: true,
    validate: function validate (_schema: boolean, data: unknown, _parent?: unknown, ctx?: any) {
      let value = data
      if (coerceStrings && typeof data === 'string' && DECIMAL_INTEGER.test(data)) {
        const big = BigInt(data)
        value = big >= Number.MIN_SAFE_INTEGER && big <= Number.MAX_SAFE_INTEGER ? Number(big) : big
        if (ctx?.parentData !== undefined) ctx.parentData[ctx.parentDataProperty] = value
      }
      if (isInt64(value)) return true
      // A type error, as JSON Schema's own: the keyword stands in for type: integer.
      ;(validate as any).errors = [{ keyword: 'type', message: INT64_MESSAGE, params: { type: 'integer' } }]
      return false
    }
  }
}

interface Choice { values: string[], name: string, schema: { $ref?: string } }

/**
 * A discriminated oneOf or anyOf (schema.ts makes it x-discriminator): the object's property
 * chooses one branch, and the object is checked against that branch alone, so that an error names
 * the branch it was checked as. Each branch is compiled when first chosen.
 */
const discriminatorKeyword: KeywordDefinition = {
  keyword: 'x-discriminator',
  schemaType: 'object',
  errors: true,
  compile ({ propertyName, choices }: { propertyName: string, choices: Choice[] }, _parent, it) {
    const ajv = it.self
    const root = it.baseId
    const compiled = new Map<Choice, ValidateFunction>()
    const branch = (choice: Choice): ValidateFunction => {
      let found = compiled.get(choice)
      // The branch's $ref: to a registered copy (schema.ts), or into the schema's own $defs.
      const ref = choice.schema.$ref ?? ''
      if (found === undefined) compiled.set(choice, found = ajv.getSchema(ref.startsWith('#') ? root + ref : ref) ?? ajv.compile(choice.schema))
      return found
    }
    const byValue = new Map<unknown, Choice>()
    for (const choice of choices) for (const value of choice.values) byValue.set(value, choice)
    const allowed = choices.flatMap((choice) => choice.values)
    const validate = (data: any, ctx?: { instancePath: string }): boolean => {
      const at = ctx?.instancePath ?? ''
      // What is no object has no property to choose by: valid only as some branch takes it (the
      // oneOf it stands for is not checked besides).
      if (data === null || typeof data !== 'object' || Array.isArray(data)) {
        if (choices.some((choice) => branch(choice)(data))) return true
        validate.errors = [{ instancePath: at, keyword: 'type', params: { type: 'object' }, message: `must be object, whose ${propertyName} chooses its schema` }]
        return false
      }
      if (!(propertyName in data)) {
        validate.errors = [{ instancePath: at, keyword: 'discriminator', params: { missingProperty: propertyName, allowed }, message: `must have required property '${propertyName}'` }]
        return false
      }
      const choice = byValue.get(data[propertyName])
      if (choice === undefined) {
        validate.errors = [{ instancePath: `${at}/${propertyName}`, keyword: 'discriminator', params: { allowed }, message: `must be one of ${allowed.join(', ')}, which choose its schema` }]
        return false
      }
      const checked = branch(choice)
      if (checked(data)) return true
      const chosen = `(as ${choice.name}, which ${propertyName} ${JSON.stringify(data[propertyName])} chooses)`
      validate.errors = (checked.errors ?? []).map((error) => ({ ...error, instancePath: at + error.instancePath, message: `${error.message} ${chosen}` }))
      return false
    }
    validate.errors = null as unknown
    return validate as any
  }
}

function createAjv (coerce: boolean): Ajv2020 {
  // validateSchema: false skips checking each schema against the 2020-12 meta-schema, whose
  // compilation cost ~50 ms of every start: the document is validated against OpenAPI's schema
  // in CI (npm run validate:spec), and schema.ts drops keywords whose values a validator could not take.
  // strictNumbers: Infinity and NaN are no numbers (JSON's 1e999); for text, see exactNumber.
  const ajv = new Ajv2020({ strict: false, logger: false, validateSchema: false, coerceTypes: coerce, strictNumbers: true, allErrors: false, inlineRefs: false, code: { regExp: documentPattern } })
  // JSON Schema's formats and OpenAPI's (int32, int64, float, double, byte, binary, password).
  addFormats(ajv)
  ajv.addKeyword(int64Keyword(coerce))
  ajv.addKeyword(exactNumberKeyword)
  ajv.addKeyword(numericKeyword)
  ajv.addKeyword(discriminatorKeyword)
  ajv.addKeyword(textUnionKeyword)
  return ajv
}

/** Compiles the document's schemas into validators, each when first called. */
export interface Validators {
  /** For request bodies, as parsed; readOnly properties not required. */
  request: (schema: JsonSchema) => ValidateFunction
  /** For what arrives as text (parameters, form fields): converted as their schemas say. */
  text: (schema: JsonSchema) => ValidateFunction
  /** For answers; writeOnly properties not required. */
  response: (schema: JsonSchema) => ValidateFunction
}

/** Validators of `doc`'s schemas (and of schemas made of them: their $refs point into `doc`). */
export function createValidators (doc: OpenApiDocument, file = 'the document'): Validators {
  // Each Ajv, and its registry of the document's schemas, is made when first needed: a document
  // without parameters never needs the second, a service without response validation the third.
  const made = (coerce: boolean, view: SchemaView) => {
    // The registered copies, by $id: a text union's branch is typed through its $ref.
    const registered = new Map<string, JsonSchema>()
    const typeOf = (branch: any): unknown => typeof branch?.$ref === 'string' ? (registered.get(branch.$ref) as any)?.type : branch?.type
    // Text unions first, while their branches still say their types; int64 then rewrites those too,
    // and what int64 leaves an integer is checked to be exact.
    const prepared = (schema: JsonSchema): AnySchema => coerce
      ? rewritten(rewritten(rewritten(schema, textUnion(typeOf)), int64Checked), exactNumberChecked)
      : view === 'response' ? rewritten(rewritten(schema, int64Checked), numericChecked) : rewritten(rewritten(rewritten(schema, int64Checked), exactNumberChecked), numericChecked)
    let ajv: Ajv2020 | undefined
    let registry: SchemaRegistry | undefined
    // One validator a schema, whoever asks for it and however often: compiled once, at its first use.
    const compiled = new WeakMap<object, ValidateFunction>()
    return (schema: JsonSchema): ValidateFunction => {
      const known = typeof schema === 'object' && schema !== null ? compiled.get(schema) : undefined
      if (known !== undefined) return known
      let validate: ValidateFunction | undefined
      const lazy = ((data: unknown, ctx?: any) => {
        if (validate === undefined) {
          ajv ??= createAjv(coerce)
          registry ??= new SchemaRegistry(doc, view, file, (copy) => {
            registered.set((copy as { $id: string }).$id, copy)
            ajv!.addSchema(prepared(copy))
          })
          validate = ajv.compile(prepared(registry.schema(schema)))
        }
        const valid = validate(data, ctx)
        lazy.errors = validate.errors
        return valid
      }) as ValidateFunction
      if (typeof schema === 'object' && schema !== null) compiled.set(schema, lazy)
      return lazy
    }
  }
  return { request: made(false, 'request'), text: made(true, 'request'), response: made(false, 'response') }
}

/**
 * Fastify's message format ("body/name must be string"), on an error that skips the costly stack
 * trace; named for the engine's own bound where that is all the value breaks (exactNumber's).
 */
export function validationError (errors: ValidateFunction['errors'], dataVar: string): Error {
  const text = errorsText(errors, dataVar)
  return errors?.every((e) => e.keyword === 'exactNumber') === true ? new InexactNumberError(text) : new ValidationError(text)
}

/** Errors in Fastify's words ("body/name must be string"), each at its place under `dataVar`; with none, "/" for the value itself. */
export function errorsText (errors: ValidateFunction['errors'], dataVar = ''): string {
  return (errors ?? []).map((e) => `${dataVar}${e.instancePath || (dataVar === '' ? '/' : '')} ${errorText(e)}`).join(', ')
}

// An enum's values named in a message: no more than these.
const NAMED_VALUES = 10

/** An error's words, with what ajv's alone leave out: the property not allowed, the values allowed ("must NOT have additional properties (colour)"). */
function errorText (e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return `${e.message} (${String(e.params.additionalProperty)})`
  if (e.keyword === 'unevaluatedProperties') return `${e.message} (${String(e.params.unevaluatedProperty)})`
  if (e.keyword !== 'enum') return e.message ?? ''
  const values: unknown[] = e.params.allowedValues
  return `${e.message} (${values.slice(0, NAMED_VALUES).map((v) => JSON.stringify(v)).join(', ')}${values.length > NAMED_VALUES ? ', …' : ''})`
}
