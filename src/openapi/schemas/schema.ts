import { DocumentError, pointerToken } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { Validators } from './validation.ts'

// One schema of the document made self-contained, as a validator or a serializer takes it: every
// $ref into the document becomes a $ref into the schema's own $defs, which carry what it reaches,
// recursive schemas included. It is made for one use (a view), when that use first needs it, with
// what OpenAPI says about that use applied as it is copied:
// - request: readOnly properties are not required (the server sets them);
// - response: writeOnly properties are not required (they are never sent);
// - serialize: writeOnly properties are left out, so that the serializer never sends them.
// For the validator (request and response), a discriminator's oneOf or anyOf becomes a dispatch on
// its property (x-discriminator, validation.ts). In every view, what older JSON Schema drafts wrote otherwise
// (draft-04's boolean exclusiveMinimum, a tuple's array `items`, `dependencies`, 3.0's `nullable`) is said as
// 2020-12 says it; a keyword whose value is of the wrong kind (`required: true`, `type: file`)
// constrains nothing, as a validator that did not know it would treat it.

export type JsonSchema = Record<string, any>
export type SchemaView = 'request' | 'response' | 'serialize'

const SCHEMA_PREFIX = '#/components/schemas/'
const DEFS_PREFIX = '#/$defs/'

// The keywords whose values are schemas: a map of them, a list of them, or one.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
const SCHEMAS = new Set(['items', 'additionalItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'])
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
// What kind of value each validating keyword takes; another kind is dropped (see above).
const KINDS: Record<string, (value: unknown) => boolean> = Object.fromEntries([
  ...['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf', 'maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties', 'maxContains', 'minContains']
    .map((k) => [k, (v: unknown) => typeof v === 'number' && Number.isFinite(v) && (k !== 'multipleOf' || v > 0)]),
  ...['required', 'enum'].map((k) => [k, Array.isArray]),
  ['uniqueItems', (v: unknown) => typeof v === 'boolean'],
  ['pattern', (v: unknown) => typeof v === 'string'],
  ['format', (v: unknown) => typeof v === 'string'],
  ['type', (v: unknown) => (Array.isArray(v) ? v : [v]).every((t: unknown) => JSON_TYPES.has(t as string)) && (!Array.isArray(v) || v.length > 0)],
  ...[...SCHEMA_MAPS].map((k) => [k, (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)]),
  ...[...SCHEMA_LISTS].map((k) => [k, (v: unknown) => Array.isArray(v) && v.length > 0])
])

const unescape = (token: string) => decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~')

/** A JSON pointer's tokens, as a $ref's fragment writes them (`#/paths/~1pets`, percent-encoded or not): ['paths', '/pets']. */
export const tokensOf = (pointer: string): string[] => pointer.split('/').slice(1).map(unescape)

/** The value a JSON pointer (`/a/0`) names within `root`; undefined when it names nothing. Throws a URIError on a malformed %-escape. */
export function valueAt (root: unknown, pointer: string): any {
  let at: any = root
  for (const token of tokensOf(pointer)) at = at !== null && typeof at === 'object' ? at[token] : undefined
  return at
}

/**
 * The node a local $ref points at; undefined when it points at nothing. A pointer that passes
 * through a $ref goes on in what that $ref points at, as reference resolvers read it: a bundler
 * writes such pointers (dnd5eapi.co's `#/paths/…/schema/allOf/3/…`, through the $ref to Monster
 * that `schema` is), and its stubs beside that $ref are siblings 3.0 ignores, gone from the model.
 */
export function pointerTarget (doc: OpenApiDocument, ref: string, seen = new Set<string>()): any {
  if (!ref.startsWith('#')) return undefined
  let at: any = doc
  for (const token of tokensOf(ref.slice(1))) {
    while (at !== null && typeof at === 'object' && !Object.hasOwn(at, token) && typeof at.$ref === 'string' && !seen.has(at.$ref)) {
      seen.add(at.$ref)
      at = pointerTarget(doc, at.$ref, seen)
    }
    at = at !== null && typeof at === 'object' ? at[token] : undefined
  }
  return at
}

/** Follows a schema's own $ref (and the refs it lands on) to the schema it stands for. */
export function derefSchema (doc: OpenApiDocument, schema: any, seen = new Set<string>()): any {
  while (schema !== null && typeof schema === 'object' && typeof schema.$ref === 'string' && !seen.has(schema.$ref)) {
    seen.add(schema.$ref)
    schema = pointerTarget(doc, schema.$ref) ?? {}
  }
  return schema
}

// A $defs name that every resolver reads alike: fast-json-stringify's does not unescape ~1 in a
// pointer, so a schema under a path (#/paths/~1v2~1things/…) would not be found by it.
const plainName = (key: string) => key.replace(/[^A-Za-z0-9_.-]/g, '_')

/** The $defs key and the node a local $ref copies: a component's schema keeps its name (#/$defs/Plant), and a ref into one points into its copy. */
function defOf (ref: string): { key: string, source: string, tail: string } {
  if (ref.startsWith(SCHEMA_PREFIX)) {
    const [name, ...tail] = ref.slice(SCHEMA_PREFIX.length).split('/')
    return { key: unescape(name), source: SCHEMA_PREFIX + name, tail: tail.map((t) => '/' + t).join('') }
  }
  // Anywhere else in the document: the node itself, under a key spelled from its pointer.
  return { key: ref.slice(2).split('/').map(unescape).join('.'), source: ref, tail: '' }
}

/** The string values a schema allows its property `name` (a const, or an enum, through allOf too); none where it does not pin them. */
function pinned (doc: OpenApiDocument, schema: unknown, name: string, seen = new Set<unknown>()): string[] {
  const s = derefSchema(doc, schema)
  if (s === null || typeof s !== 'object' || seen.has(s)) return []
  seen.add(s)
  const property = derefSchema(doc, s.properties?.[name])
  const values = property?.const !== undefined ? [property.const] : Array.isArray(property?.enum) ? property.enum : []
  const own = values.filter((value: unknown): value is string => typeof value === 'string')
  return own.length > 0 ? own : (Array.isArray(s.allOf) ? s.allOf : []).flatMap((part: unknown) => pinned(doc, part, name, seen))
}

/**
 * A oneOf or anyOf with a discriminator as x-discriminator: each value of its property, and the
 * branch it chooses. A branch the mapping names is chosen by the mapping's values; another by its
 * schema's name, or, where its own schema pins the property to other values (`enum: [paper]` in
 * Paper, as documents often write it), by those: no object could carry the name and pass the branch.
 */
function dispatched (doc: OpenApiDocument, node: Record<string, any>): Record<string, any> {
  const branches: any[] = node.oneOf ?? node.anyOf
  const { propertyName, mapping = {} } = node.discriminator ?? {}
  if (typeof propertyName !== 'string' || !Array.isArray(branches) || mapping === null || typeof mapping !== 'object') return node
  const byRef = new Map<string, string[]>()
  for (const [value, target] of Object.entries(mapping)) {
    // A mapping's value is a $ref, or a schema's name under components.
    if (typeof target !== 'string') continue
    const ref = target.startsWith('#') ? target : SCHEMA_PREFIX + target
    byRef.set(ref, [...byRef.get(ref) ?? [], value])
  }
  const choices: Array<{ values: string[], name: string, schema: any }> = []
  for (const branch of branches) {
    // A branch is chosen by the values its mapping gives it, else by its schema's name.
    const ref = branch?.$ref
    if (typeof ref !== 'string') return node // an inline branch has no name to be chosen by: a plain oneOf
    const name = unescape(ref.slice(ref.lastIndexOf('/') + 1))
    const own = pinned(doc, branch, propertyName)
    choices.push({ values: byRef.get(ref) ?? (own.length === 0 ? [name] : own), name, schema: branch })
  }
  const { oneOf, anyOf, discriminator, ...rest } = node
  return { ...rest, 'x-discriminator': { propertyName, choices } }
}

/** What older drafts wrote otherwise, as 2020-12 says it; wrong kinds of values dropped. */
function modernized (out: Record<string, any>): Record<string, any> {
  for (const [bound, limit] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[bound] !== 'boolean') continue
    if (out[bound] === true && typeof out[limit] === 'number') {
      out[bound] = out[limit]
      delete out[limit]
    } else {
      delete out[bound]
    }
  }
  if (Array.isArray(out.items)) {
    out.prefixItems = out.items
    if (out.additionalItems !== undefined) out.items = out.additionalItems
    else delete out.items
  }
  delete out.additionalItems
  if (out.dependencies !== null && typeof out.dependencies === 'object') {
    for (const [name, dependency] of Object.entries<any>(out.dependencies)) {
      const keyword = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas'
      out[keyword] = { ...out[keyword], [name]: dependency }
    }
  }
  delete out.dependencies
  // OpenAPI 3.0's nullable, left where the upgrade had no type to add null to: a type, if any, takes null.
  if (out.nullable === true && out.type !== undefined) out.type = [...new Set([out.type, 'null'].flat())]
  delete out.nullable
  for (const [keyword, fits] of Object.entries(KINDS)) if (keyword in out && !fits(out[keyword])) delete out[keyword]
  return out
}

/** Rewrites a schema for one view (above), each $ref into the document turned by `refTo`. */
function copier (doc: OpenApiDocument, view: SchemaView, file: string, refTo: (ref: string, rewrite: (node: unknown) => unknown) => string): (node: unknown) => any {
  const validating = view !== 'serialize'
  const hidden = view === 'request' ? 'readOnly' : 'writeOnly'
  const isHidden = (property: unknown) => derefSchema(doc, property)?.[hidden] === true
  const rewrite = (node: any): any => {
    if (typeof node === 'boolean') return node
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return {} // no schema: any value
    const source = validating && node.discriminator !== undefined ? dispatched(doc, node) : node
    const out: Record<string, any> = {}
    for (const [key, value] of Object.entries<any>(source)) {
      // Its base and dialect are the document's: one of its own would move where its $refs point.
      if (key === '$id' || key === '$schema') continue
      if (key === '$ref' && typeof value === 'string') {
        // An anchor (#name) is not followed: the schema then constrains nothing.
        if (value.startsWith('#') && !value.startsWith('#/')) return {}
        if (!value.startsWith('#')) throw new DocumentError(file, '', `has a $ref out of the document: ${value}`)
        out.$ref = refTo(value, rewrite)
      } else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') {
        out[key] = {}
        for (const [name, property] of Object.entries(value)) {
          if (key === 'properties' && view === 'serialize' && isHidden(property)) continue
          out[key][name] = rewrite(property)
        }
      } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(rewrite)
      else if (SCHEMAS.has(key)) out[key] = Array.isArray(value) ? value.map(rewrite) : rewrite(value)
      else if (key === 'x-discriminator') out[key] = { ...value, choices: value.choices.map((choice: any) => ({ ...choice, schema: rewrite(choice.schema) })) }
      else out[key] = value // data and annotations (enum, const, default, examples, x-…), kept as written
    }
    // Required, but for what this view leaves out.
    if (Array.isArray(out.required) && source.properties !== null && typeof source.properties === 'object') {
      out.required = out.required.filter((name: unknown) => !isHidden(source.properties[name as string]))
    }
    return modernized(out)
  }
  return rewrite
}

/** The node a $ref points at, or a DocumentError naming the ref. */
function targetOf (doc: OpenApiDocument, source: string, ref: string, file: string): unknown {
  if (source === '#') throw new DocumentError(file, '', 'has a $ref to the whole document (#), which is no schema')
  const target = pointerTarget(doc, source)
  if (target === undefined) throw new DocumentError(file, ref, 'is the target of a $ref, and there is nothing there')
  return target
}

/**
 * The schema made self-contained for one view (above), everything it reaches under its own $defs:
 * for a serializer, which compiles one schema by itself. Throws a DocumentError naming a $ref that
 * points at nothing or out of the document.
 */
export function standaloneSchema (doc: OpenApiDocument, schema: JsonSchema, view: SchemaView = 'request', file = 'the document'): JsonSchema {
  const defs: Record<string, JsonSchema> = {}
  const names = new Map<string, string>()
  const rewrite = copier(doc, view, file, (ref, rewrite) => {
    const { key, source, tail } = defOf(ref)
    let name = names.get(key)
    if (name === undefined) {
      name = plainName(key)
      while (name in defs) name += '_' // two keys spelled alike once plain
      names.set(key, name)
      defs[name] = {} // reserved first, so that recursive schemas end
      defs[name] = rewrite(targetOf(doc, source, ref, file)) as JsonSchema
    }
    return DEFS_PREFIX + name + tail
  })
  const root = rewrite(schema)
  if (Object.keys(defs).length === 0) return root
  return { ...root, $defs: { ...root.$defs, ...defs } }
}

/**
 * The document's schemas for one validator, each copied once for its view when a schema that
 * reaches it is first compiled, and registered with the validator under an id of its own: a
 * component that a thousand operations use is compiled once (a big document's validators would
 * otherwise copy it into each).
 */
export class SchemaRegistry {
  readonly #added = new Set<string>()
  readonly #rewrite: (node: unknown) => any

  /** `add` registers a copy with the validator, under its $id. */
  constructor (doc: OpenApiDocument, view: SchemaView, file: string, add: (schema: JsonSchema) => void) {
    this.#rewrite = copier(doc, view, file, (ref, rewrite) => {
      const { key, source, tail } = defOf(ref)
      const id = `urn:openapi:${view}:${encodeURIComponent(key)}`
      if (!this.#added.has(id)) {
        this.#added.add(id) // first, so that recursive schemas end
        let copy
        try {
          copy = rewrite(targetOf(doc, source, ref, file))
        } catch (err) {
          // Not registered (it reaches a $ref to nothing): the next schema that reaches it fails as this one did, naming that $ref.
          this.#added.delete(id)
          throw err
        }
        // A boolean schema as an object one, to carry its $id: true takes anything, false nothing.
        add(copy === false ? { not: {}, $id: id } : { ...(copy === true ? {} : copy as JsonSchema), $id: id })
      }
      return id + (tail === '' ? '' : `#${tail}`)
    })
  }

  /** The schema for the validator: copied for its view, its $refs to the registered copies. */
  schema (node: JsonSchema): JsonSchema {
    return this.#rewrite(node)
  }
}

/**
 * The first property of `value` that its schema marks writeOnly, as a JSON pointer; undefined when
 * none is there. Judged by `validators`, a oneOf's or anyOf's branch marks only what a value it
 * passes holds (JSON Schema's rule: a subschema that fails gives no annotation); without them,
 * every branch does, for what is to be left out of a value not yet checked.
 */
export function writeOnlyIn (doc: OpenApiDocument, schema: unknown, value: unknown, validators?: Pick<Validators, 'response'>): string | undefined {
  const find = (schema: unknown, value: unknown, at: string, seen: Set<unknown>): string | undefined => {
    const s = derefSchema(doc, schema)
    if (s === null || typeof s !== 'object' || value === null || typeof value !== 'object' || seen.has(s)) return undefined
    seen.add(s)
    const branches = [...s.oneOf ?? [], ...s.anyOf ?? []].filter((branch) => validators === undefined || validators.response(branch)(value))
    for (const part of [...s.allOf ?? [], ...branches]) {
      const found = find(part, value, at, seen)
      if (found !== undefined) return found
    }
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const found = find(s.items, item, `${at}/${i}`, new Set(seen))
        if (found !== undefined) return found
      }
      return undefined
    }
    for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
      if (!(name in value)) continue
      const pointer = `${at}/${pointerToken(name)}`
      if (derefSchema(doc, property)?.writeOnly === true) return pointer
      const found = find(property, (value as Record<string, unknown>)[name], pointer, new Set(seen))
      if (found !== undefined) return found
    }
    return undefined
  }
  return find(schema, value, '', new Set())
}
