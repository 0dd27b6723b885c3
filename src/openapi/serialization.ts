import fastJsonStringify from 'fast-json-stringify'
import type { FastifySerializerCompiler } from 'fastify'
import type { JsonSchema } from './routes.js'

/**
 * Answers are serialized through the document's response schemas with fast-json-stringify,
 * as Fastify does by default, but each serializer is compiled on its first use: most error
 * statuses never occur in an instance's life, and compiling them all slowed the start-up.
 */
export const lazySerializerCompiler: FastifySerializerCompiler<JsonSchema> = ({ schema }) => {
  let serialize: ((data: unknown) => string) | undefined
  return (data) => (serialize ??= fastJsonStringify(schema))(data)
}
