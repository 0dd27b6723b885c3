import fastJsonStringify from 'fast-json-stringify'
import type { FastifySerializerCompiler } from 'fastify'
import type { JsonSchema } from '../schemas/schema.ts'

/**
 * Answers are serialized through the document's response schemas with fast-json-stringify,
 * as Fastify does by default, but each serializer is compiled on its first use, and the schema it
 * compiles is made then too (a lazy schema): most error statuses never occur in an instance's
 * life, and a big document has thousands of answers.
 */
export const lazySerializerCompiler: FastifySerializerCompiler<JsonSchema> = ({ schema }) => {
  let serialize: ((data: unknown) => string) | undefined
  return (data) => (serialize ??= fastJsonStringify(((schema as { [LAZY]?: () => JsonSchema })[LAZY]?.() ?? schema) as Parameters<typeof fastJsonStringify>[0], OPTIONS))(data)
}

const LAZY = Symbol('the schema, made when first used')
// The Ajv fast-json-stringify chooses anyOf's branches with: documents as written, quietly.
const OPTIONS = { ajv: { strict: false, logger: false as const } }

/** A response schema for Fastify that is made only when its serializer is first used. */
export const lazySchema = (make: () => JsonSchema): JsonSchema => ({ [LAZY]: make })
