import type { OpenApiDocument } from '../document/document.ts'
import { pointerTarget, type JsonSchema } from './schema.ts'

// The examples a document gives of a value, where it gives them: the mock answers with them and
// the verifier sends them, each only where its schema takes it.

export interface Example { name: string, value: unknown }

/** The examples of an object with a schema (a Media Type Object, a Parameter Object): its named examples, its single one, its schema's. */
export function examplesOf (doc: OpenApiDocument, { object, schema }: { object: Record<string, any>, schema?: JsonSchema }): Example[] {
  const named = Object.entries<any>(object.examples ?? {}).map(([name, example]) => {
    const resolved = typeof example?.$ref === 'string' ? pointerTarget(doc, example.$ref) : example
    return resolved !== null && typeof resolved === 'object' && 'value' in resolved ? { name, value: resolved.value } : undefined
  }).filter((example): example is Example => example !== undefined)
  if (object.example !== undefined) named.push({ name: 'example', value: object.example })
  const own = schema?.$ref === undefined ? schema : pointerTarget(doc, schema.$ref)
  if (Array.isArray(own?.examples)) named.push(...own.examples.map((value: unknown, i: number) => ({ name: `schema example ${i + 1}`, value })))
  else if (own?.example !== undefined) named.push({ name: 'schema example', value: own.example })
  return named
}
