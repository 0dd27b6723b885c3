import type { OpenApiDocument } from './document.ts'

// The document as the engine reads it: OpenAPI 3.1, whose schemas are JSON Schema 2020-12. A 3.0
// document is upgraded once, as it is read, by Scalar's upgrader (loaded only then): `nullable`
// becomes a null type, boolean exclusiveMinimum and exclusiveMaximum become bounds, `example`
// becomes `examples`, binary strings become contentMediaType, base64 strings contentEncoding (and
// keep their format, below). From there one code path serves both; the service's document served
// (/openapi.yaml, Swagger UI) stays as written.

/** The document as 3.1: `document` itself when it is; else an upgraded copy, or with `inPlace` (a big document served as upgraded, the mock's) the document upgraded. */
export async function modelOf (document: OpenApiDocument, { inPlace = false } = {}): Promise<OpenApiDocument> {
  if (!String(document.openapi).startsWith('3.0')) return document
  const { upgradeFromThreeToThreeOne } = await import('@scalar/openapi-upgrader/3.0-to-3.1')
  return withByteFormat(upgradeFromThreeToThreeOne(withoutRefSiblings(inPlace ? document : structuredClone(document)))) as OpenApiDocument
}

// What 3.0 lets stand beside a $ref: nullable (which the upgrade turns into a null type) and words.
const KEPT_BESIDE_REF = new Set(['$ref', 'nullable', 'description', 'summary'])

/**
 * In 3.0, a $ref's siblings are ignored ("any properties added SHALL be ignored"); in 3.1 they
 * apply. So they are dropped before the upgrade: a `type: string` written beside a $ref to an
 * object constrained nothing, and must not start to. In place; the document, for chaining.
 */
const withoutRefSiblings = (document: unknown): unknown => eachObject(document, (node) => {
  if (typeof node.$ref !== 'string') return
  for (const key of Object.keys(node)) if (!KEPT_BESIDE_REF.has(key) && !key.startsWith('x-')) delete node[key]
})

/**
 * The upgrade writes 3.0's `format: byte` (and the `base64` some write) as `contentEncoding:
 * base64`, which JSON Schema 2020-12 makes an annotation that no validator checks. In 3.0 it is a
 * format, checked as the others are (and drawn and sampled as base64): so `format: byte` is put
 * back beside it. A 3.0 document has no contentEncoding of its own. In place; the document, for chaining.
 */
const withByteFormat = (document: unknown): unknown => eachObject(document, (node) => {
  if (node.contentEncoding === 'base64' && node.format === undefined && [node.type].flat().includes('string')) node.format = 'byte'
})

/** `visit` on each object of `node` (node itself, then what it holds once visited); `node`, for chaining. */
function eachObject (node: unknown, visit: (object: Record<string, any>) => void): unknown {
  if (Array.isArray(node)) {
    for (const item of node) eachObject(item, visit)
  } else if (node !== null && typeof node === 'object') {
    visit(node as Record<string, any>)
    for (const value of Object.values(node)) eachObject(value, visit)
  }
  return node
}
