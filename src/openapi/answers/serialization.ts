import fastJsonStringify from 'fast-json-stringify'
import type { FastifySerializerCompiler } from 'fastify'
import { jsonText } from '../../http/json-body.ts'
import { valueAt, type JsonSchema } from '../schemas/schema.ts'

/**
 * Answers are serialized through the document's response schemas with fast-json-stringify,
 * as Fastify does by default, but each serializer is compiled on its first use, and the schema it
 * compiles is made then too (a lazy schema): most error statuses never occur in an instance's
 * life, and a big document has thousands of answers.
 */
export const lazySerializerCompiler: FastifySerializerCompiler<JsonSchema> = ({ schema }) => {
  let serialize: ((data: unknown) => string) | undefined
  return (data) => (serialize ??= serializerOf((schema as { [LAZY]?: () => JsonSchema })[LAZY]?.() ?? schema))(data)
}

const LAZY = Symbol('the schema, made when first used')
// The Ajv fast-json-stringify chooses anyOf's branches with: documents as written, quietly.
const OPTIONS = { ajv: { strict: false, logger: false as const } }

/** A response schema for Fastify that is made only when its serializer is first used. */
export const lazySchema = (make: () => JsonSchema): JsonSchema => ({ [LAZY]: make })

// fast-json-stringify walks every path through a schema's references before it compiles (its
// recursion detection keeps no record of what it has already walked): through a graph of shared
// references, as Stripe's expandable objects are, that is exponential, and Stripe's GET
// /v1/account held the event loop for minutes. GitHub's most tangled answer has 16,735 paths,
// Stripe's 732 of 903 more than 100,000: past this many, an answer is written as JSON of what its
// schema declares (declared, below), walked by the value.
const MAX_PATHS = 100_000
// Keywords whose values are data, not schemas.
const DATA = new Set(['enum', 'const', 'default', 'example', 'examples', '$defs'])

/** Whether a standalone schema (its references into its own $defs) has no more than `limit` paths through them, cycles cut. */
function pathsWithin (root: JsonSchema, limit: number): boolean {
  let paths = 0
  const onPath = new Set<unknown>()
  const walk = (node: unknown): boolean => {
    if (node === null || typeof node !== 'object' || onPath.has(node)) return true
    if (++paths > limit) return false
    onPath.add(node)
    const { $ref } = node as { $ref?: unknown }
    const within = (typeof $ref !== 'string' || !$ref.startsWith('#') || walk(valueAt(root, $ref.slice(1)))) &&
      Object.entries(node).every(([key, value]) => DATA.has(key) || walk(value))
    onPath.delete(node)
    return within
  }
  return walk(root)
}

type Part = Record<string, any>
const BRANCHES = ['allOf', 'anyOf', 'oneOf', 'then', 'else']

/** The schemas `schemas` are made of, their references followed and their branches' too, each once; `true` where one takes anything. */
function partsOf (root: JsonSchema, schemas: unknown[]): Part[] | true {
  const parts: Part[] = []
  const seen = new Set<unknown>()
  for (let queue = [...schemas]; queue.length > 0;) {
    const schema = queue.pop()
    if (schema === true) return true
    if (schema === null || typeof schema !== 'object' || seen.has(schema)) continue
    seen.add(schema)
    const part = schema as Part
    if (typeof part.$ref === 'string') queue.push(part.$ref.startsWith('#') ? valueAt(root, part.$ref.slice(1)) : true)
    const branches = BRANCHES.flatMap((keyword) => [part[keyword]].flat().filter((branch) => branch !== undefined))
    // A schema that shapes nothing (no type, no members, no items, no branches) is written as it is, as fast-json-stringify writes `{}`.
    if (part.$ref === undefined && branches.length === 0 && ['type', 'properties', 'additionalProperties', 'patternProperties', 'items', 'prefixItems'].every((keyword) => part[keyword] === undefined)) return true
    parts.push(part)
    queue.push(...branches)
  }
  return parts
}

/**
 * `value` with only what its schemas declare, as fast-json-stringify writes it (the 'serialize'
 * view has no writeOnly property): an object's members that some branch declares, or any where
 * one takes more (additionalProperties, patternProperties), each by the schemas that declare it;
 * a list's items by its items' schemas. Walked by the value, so bounded by its size however
 * tangled the schema; of a union, what any branch declares.
 */
function declared (root: JsonSchema, schemas: unknown[], value: unknown): unknown {
  if (value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') return value
  const parts = partsOf(root, schemas)
  if (parts === true) return value
  if (Array.isArray(value)) {
    const items = parts.flatMap((part) => part.items === undefined ? [] : [part.items])
    return items.length === 0 ? value : value.map((item) => declared(root, items, item))
  }
  const out: Record<string, unknown> = Object.create(null) // a member named __proto__ is a member
  for (const [name, member] of Object.entries(value)) {
    const own = parts.flatMap((part) => part.properties?.[name] === undefined || !Object.hasOwn(part.properties, name) ? [] : [part.properties[name]])
    const more = parts.flatMap((part) => part.patternProperties !== undefined ? [true] : part.additionalProperties === undefined || part.additionalProperties === false ? [] : [part.additionalProperties])
    if (own.length > 0 || more.length > 0) out[name] = declared(root, own.length > 0 ? own : more, member)
  }
  return out
}

/** fast-json-stringify's serializer of a schema; for one too tangled for it to compile, JSON of what the schema declares (its bigints exact). */
const serializerOf = (schema: JsonSchema): (data: unknown) => string =>
  pathsWithin(schema, MAX_PATHS) ? fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0], OPTIONS) : (data) => jsonText(declared(schema, [schema], data))
