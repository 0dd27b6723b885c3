import type { OpenApiDocument } from '../document/document.ts'
import { propertiesOf } from '../routes/resources.ts'
import { shapeOf, type MediaSpec } from '../routes/routes.ts'
import { derefSchema } from '../schemas/schema.ts'
import { concreteType, kindOf } from './bodies.ts'

// JSON Patch (RFC 6902): which bodies are lists of operations on an item rather than its members,
// for the mock that applies them and the verifier that sends them.

/**
 * Whether a body of this media is a JSON Patch: in its own media type, or in JSON whose schema is a
 * list of operations (objects that declare `op` and `path`), as LaunchDarkly's, 1Password
 * Connect's and Otoroshi's descriptions have them under application/json.
 */
export function isJsonPatch (doc: OpenApiDocument, media: MediaSpec | undefined): boolean {
  if (media === undefined) return false
  const type = concreteType(media.type).toLowerCase()
  if (type === 'application/json-patch+json') return true
  if (kindOf(type) !== 'json' || shapeOf(doc, media.schema) !== 'array') return false
  const operation = propertiesOf(doc, derefSchema(doc, media.schema)?.items)
  return operation.op !== undefined && operation.path !== undefined
}
