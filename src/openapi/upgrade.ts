import type { OpenApiDocument } from './document.js'

// The document as the engine reads it: OpenAPI 3.1, whose schemas are JSON Schema 2020-12. A 3.0
// document is upgraded once, as it is read, by Scalar's upgrader (loaded only then): `nullable`
// becomes a null type, boolean exclusiveMinimum and exclusiveMaximum become bounds, `example`
// becomes `examples`, binary strings become contentMediaType. From there one code path serves
// both; the service's document served (/openapi.yaml, Swagger UI) stays as written.

/** The document as 3.1: `document` itself when it is; else an upgraded copy, or with `inPlace` (a big document served as upgraded, the mock's) the document upgraded. */
export async function modelOf (document: OpenApiDocument, { inPlace = false } = {}): Promise<OpenApiDocument> {
  if (!String(document.openapi).startsWith('3.0')) return document
  const { upgradeFromThreeToThreeOne } = await import('@scalar/openapi-upgrader/3.0-to-3.1')
  return upgradeFromThreeToThreeOne(inPlace ? document : structuredClone(document)) as OpenApiDocument
}
