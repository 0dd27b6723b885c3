import { jsonText } from '../../http/json-body.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { concreteType, kindOf } from '../requests/bodies.ts'
import { jsonContent } from '../requests/parameters.ts'
import { formBody, formFields, multipartFields, propertySchema } from '../requests/request-validation.ts'
import type { MediaSpec, ParameterSpec } from '../routes/routes.ts'
import { derefSchema } from '../schemas/schema.ts'

// How a client spells values in a request, as OpenAPI's styles and media types say: the inverse
// of what the engine reads (requests/parameters.ts, requests/bodies.ts), and tested as its
// round trip. A path segment (simple, label, matrix), a query (form, exploded or not,
// spaceDelimited, pipeDelimited, deepObject, or content), a header (simple) or a cookie (form);
// a body as JSON, a form, multipart, text or bytes.

/** A request as the verifier sends it: its path and query are the document's, under the base URL. */
export interface HttpRequest { method: string, path: string, headers: Record<string, string>, body?: string | Buffer }

const text = (value: unknown): string => typeof value === 'object' && value !== null ? jsonText(value) : String(value)
/** JSON in ASCII alone, each other character escaped (\u0100): the same value, and text a header can carry. */
const asciiJson = (value: unknown): string => jsonText(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
const enc = encodeURIComponent

/** A parameter's value spelled as its style says, for a path segment, a header or a cookie (as one piece of text). */
export function spelled (p: ParameterSpec, value: unknown, encode: (s: string) => string): string {
  if (p.contentType !== undefined) return encode(jsonContent(p) ? asciiJson(value) : text(value))
  const items = Array.isArray(value)
    ? value.map((v) => encode(text(v)))
    : value !== null && typeof value === 'object'
      ? Object.entries(value).map(([k, v]) => p.explode ? `${encode(k)}=${encode(text(v))}` : `${encode(k)},${encode(text(v))}`)
      : undefined
  const join = (separator: string) => items === undefined ? encode(text(value)) : items.join(separator)
  switch (p.style) {
    case 'label': return '.' + join(p.explode ? '.' : ',')
    case 'matrix':
      if (Array.isArray(value) && p.explode) return value.map((v) => `;${p.name}=${encode(text(v))}`).join('')
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && p.explode) return ';' + join(';')
      return `;${p.name}=` + join(',')
    default: return join(',')
  }
}

/**
 * deepObject's pairs at any depth, as the engine reads them back (requests/parameters.ts):
 * name[a][b]=1; a list's items name[a][]=1, or by their index where they are structures
 * themselves (name[0][a]=1), which `[]` would split.
 */
function deepPairs (prefix: string, value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [`${prefix}=${enc(text(value))}`]
  if (!Array.isArray(value)) return Object.entries(value).flatMap(([k, v]) => deepPairs(`${prefix}%5B${enc(k)}%5D`, v))
  const structured = value.some((item) => item !== null && typeof item === 'object')
  return value.flatMap((item, i) => deepPairs(`${prefix}%5B${structured ? i : ''}%5D`, item))
}

/** A query parameter (or a form field) as name=value pairs, its style's. */
export function queryPairs (p: ParameterSpec, value: unknown): string[] {
  const name = enc(p.name)
  if (p.contentType !== undefined) return [`${name}=${enc(jsonText(value))}`]
  if (p.style === 'deepObject' && value !== null && typeof value === 'object') return deepPairs(name, value)
  if (Array.isArray(value)) {
    if (p.style === 'form' && p.explode) return value.map((v) => `${name}=${enc(text(v))}`)
    const separator = p.style === 'spaceDelimited' ? '%20' : p.style === 'pipeDelimited' ? '%7C' : ','
    return [`${name}=${value.map((v) => enc(text(v))).join(separator)}`]
  }
  if (value !== null && typeof value === 'object') {
    if (p.style === 'form' && p.explode) return Object.entries(value).map(([k, v]) => `${enc(k)}=${enc(text(v))}`)
    return [`${name}=${Object.entries(value).map(([k, v]) => `${enc(k)},${enc(text(v))}`).join(',')}`]
  }
  return [`${name}=${enc(text(value))}`]
}

/** A cookie parameter as name=value pairs: an exploded object's members each a cookie of its own, as the engine reads them. */
export function cookiePairs (p: ParameterSpec, value: unknown): string[] {
  if (p.contentType === undefined && p.explode && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) => `${enc(k)}=${enc(text(v))}`)
  }
  // A list is one cookie, its items joined: the engine reads the first cookie of a name.
  return [`${enc(p.name)}=${spelled({ ...p, explode: false }, value, enc)}`]
}

/** True when a value has members that are structures themselves: no style spells those. */
export const isNested = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && Object.values(value).some((v) => v !== null && typeof v === 'object')

// A boundary no generated value holds.
const BOUNDARY = 'verify-boundary-7MA4YWxkTrZu0gW'

/** A multipart body's parts as the verifier writes them: a list's items each a part (none for an empty list), a file's bytes as text, a structure as JSON. */
export function multipartParts (doc: OpenApiDocument, media: MediaSpec, value: unknown): Array<{ name: string, file: boolean, json: boolean, text: string }> {
  return Object.entries(value ?? {}).flatMap(([name, v]) => {
    const property = derefSchema(doc, propertySchema(doc, media.schema, name)) ?? {}
    const file = property.format === 'binary' || property.contentMediaType !== undefined || property.type === undefined
    return (Array.isArray(v) && property.type === 'array' ? v : [v]).map((item) => ({ name, file, json: !file && typeof item === 'object' && item !== null, text: text(item) }))
  })
}

/** A form or multipart body as the engine reads what bodyIn writes of `value` (requests/request-validation.ts): what the verifier checks a body it calls valid by. */
export function bodyReadBack (doc: OpenApiDocument, media: MediaSpec, value: unknown): unknown {
  if (kindOf(concreteType(media.type)) === 'form') return formBody(doc, media)(bodyIn(doc, media, value).body as string)
  const view: Record<string, unknown[]> = {}
  for (const { name, json, text } of multipartParts(doc, media, value)) (view[name] ??= []).push(json ? JSON.parse(text) : text)
  return multipartFields(doc, media, view)
}

/** The body a client sends in `media`: a value, spelled as its media type wants it; its Content-Type. */
export function bodyIn (doc: OpenApiDocument, media: MediaSpec, value: unknown): { type: string, body: string | Buffer } {
  const type = concreteType(media.type)
  switch (kindOf(type)) {
    case 'json': return { type, body: jsonText(value ?? {}) }
    case 'form': {
      // Each property as the engine reads it (formFields); one the schema does not name, as form.
      const fields = new Map(formFields(doc, media).map((field) => [field.name, field]))
      const pairs = Object.entries(value ?? {}).flatMap(([k, v]) => queryPairs(fields.get(k) ?? { name: k, in: 'query', required: false, style: 'form', explode: true, schema: {}, shape: Array.isArray(v) ? 'array' : v !== null && typeof v === 'object' ? 'object' : 'primitive', object: {} }, v))
      return { type, body: pairs.join('&') }
    }
    case 'multipart': {
      const parts = multipartParts(doc, media, value).map(({ name, file, json, text }) => file
        ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${text}\r\n`
        : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n${json ? 'Content-Type: application/json\r\n' : ''}\r\n${text}\r\n`)
      return { type: `multipart/form-data; boundary=${BOUNDARY}`, body: parts.join('') + `--${BOUNDARY}--\r\n` }
    }
    case 'text': return { type, body: typeof value === 'string' ? value : text(value ?? 'text') }
    default: return { type, body: Buffer.from(typeof value === 'string' ? value : 'bytes') }
  }
}
