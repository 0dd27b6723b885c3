import { Ajv2020, type AnySchema, type KeywordDefinition } from 'ajv/dist/2020.js'
import formatsPlugin from 'ajv-formats'
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { ValidationError } from '../errors.js'
import type { JsonSchema } from './routes.js'

// Requests are validated with the dialect OpenAPI 3.1 declares, JSON Schema 2020-12,
// in strict mode. Bodies are never coerced; path, query and header values arrive as
// strings, so those are.

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
const DECIMAL_INTEGER = /^-?(?:0|[1-9]\d*)$/
const INT64_MESSAGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`
// Annotations OpenAPI adds to JSON Schema; declared so strict mode knows them.
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs']

const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default

/** True for a value that is exactly an int64: a safe-integer number, or a bigint in range. */
export function isInt64 (value: unknown): boolean {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX
  return Number.isSafeInteger(value)
}

/**
 * Integers beyond 2^53 reach the validator as bigint (see http/json-body.ts), which JSON Schema's
 * `type: integer` cannot accept. So wherever a schema says `format: int64`, its integer type
 * is checked by the int64 keyword instead, which accepts number and bigint alike.
 */
export function withInt64Keyword (node: any): any {
  if (Array.isArray(node)) return node.map(withInt64Keyword)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, any> = {}
  for (const [key, value] of Object.entries(node)) out[key] = withInt64Keyword(value)
  if (out.format !== 'int64') return out
  const { type, format, ...rest } = out
  const types: string[] = Array.isArray(type) ? type : [type]
  if (!types.includes('integer')) return out
  const others = types.filter((t) => t !== 'integer')
  if (others.length === 0) return { ...rest, int64: true }
  return { ...rest, anyOf: [{ int64: true }, { type: others }] }
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
      ;(validate as any).errors = [{ keyword: 'int64', message: INT64_MESSAGE, params: {} }]
      return false
    }
  }
}

function createAjv (coerce: boolean): Ajv2020 {
  // validateSchema: false skips checking each schema against the 2020-12 meta-schema, whose
  // compilation cost ~50 ms of every start. The document is validated against the OpenAPI 3.1
  // schema in CI (npm run validate:spec), and strict mode still refuses unknown keywords.
  const ajv = new Ajv2020({ strict: true, validateSchema: false, coerceTypes: coerce ? 'array' : false, useDefaults: true, allErrors: false })
  addFormats(ajv)
  ajv.addVocabulary(OPENAPI_KEYWORDS)
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX })
  ajv.addKeyword(int64Keyword(coerce))
  return ajv
}

export function createValidatorCompiler (): FastifySchemaCompiler<JsonSchema> {
  // Each Ajv is made when first needed: a document without parameters never needs the second.
  let bodies: Ajv2020 | undefined
  let others: Ajv2020 | undefined
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? (bodies ??= createAjv(false)) : (others ??= createAjv(true))
    return ajv.compile(withInt64Keyword(schema) as AnySchema)
  }
}

/** Fastify's message format ("body/name must be string"), on an error that skips the costly stack trace. */
export const formatValidationErrors: NonNullable<FastifyServerOptions['schemaErrorFormatter']> = (errors, dataVar) =>
  new ValidationError(errors.map((e) => `${dataVar}${e.instancePath ?? ''} ${e.message}`).join(', '))
