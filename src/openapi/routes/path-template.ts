import type { JsonSchema } from '../schemas/schema.ts'

// A path template of the document (/users/{id}/repos) in the form Fastify's router takes
// (/users/:p0/repos). Each parameter is named p0, p1…, whatever the document calls it (a name
// with a hyphen or a dot would end a router parameter early). A parameter that shares its segment
// with other text ({name}.json, {id}:cancel) matches up to that text, through a pattern. Two with
// nothing between them ({id}{format}) cannot be told apart so: there one whose values are a list
// (an enum of .json and .xml) matches one of them, so string.json reads as id and format, where
// the shortest match would split it after its first letter; and an integer matches its digits
// (NASA's /api/projects/{id}{.format}: 17json is 17 and json). One followed by text and a last
// parameter of listed values ({position}.{ext}) takes all up to that text's last occurrence.
// A colon in the text is doubled, as the router reads a single one as a parameter.

export interface PathTemplate {
  url: string
  /** The document's name of each parameter, in order. */
  names: string[]
  /** The document's name of each router parameter: { p0: 'id' }. */
  byName: Record<string, string>
}

const PARAMETER = /\{([^{}]*)\}/g

/** `schemaOf(name)`: the schema of the path parameter of that name, where the document gives one. */
export function fastifyUrl (path: string, schemaOf: (name: string) => JsonSchema | undefined = () => undefined): PathTemplate {
  // A fragment, a query or a wildcard are not part of any path a request can have
  // (/#X-Amz-Target=… keys, /pets?kind=cat), and the router would read * as one.
  if (!path.startsWith('/') || /[#?*\s]/.test(path)) throw new Error('has a path that no request can have: a fragment (#), a query (?), a wildcard (*) or a space is none of a path')
  const names: string[] = []
  const byName: Record<string, string> = {}
  const segments = path.split('/').map((segment) => {
    const parts = segment.split(PARAMETER)
    if (parts.some((part, i) => i % 2 === 0 && /[{}]/.test(part))) throw new Error('has a path with an unbalanced { or }')
    const alone = parts.length === 3 && parts[0] === '' && parts[2] === ''
    return parts.map((part, i) => {
      if (i % 2 === 0) return part.replace(/:/g, '::')
      if (part === '') throw new Error('has a path parameter with no name, {}')
      if (names.includes(part)) throw new Error(`has {${part}} twice in its path`)
      const router = `p${names.length}`
      names.push(part)
      byName[router] = part
      const adjacent = (i >= 3 && parts[i - 1] === '') || (i + 2 < parts.length && parts[i + 1] === '')
      if (alone) return `:${router}`
      // Its schema tells it apart only from a parameter beside it.
      const schema = adjacent ? schemaOf(part) : undefined
      return `:${router}(^${choicePattern(listed(schema)) ?? integerPattern(schema) ?? (extended(parts, i, schemaOf) ? '[^/]+' : '[^/]+?')})`
    }).join('')
  })
  return { url: segments.join('/'), names, byName }
}

/**
 * Whether the parameter at `parts[i]` is followed by text and a last parameter whose values are a
 * list none of which holds that text ({position}.{ext}, ext json or xml): an extension, so the
 * parameter takes all up to the text's last occurrence (TomTom's positions, 37.8328,-122.27669.json).
 */
function extended (parts: string[], i: number, schemaOf: (name: string) => JsonSchema | undefined): boolean {
  const text = parts[i + 1]
  const last = i + 2 === parts.length - 2 && parts.at(-1) === '' ? listed(schemaOf(parts[i + 2])) : undefined
  return text !== undefined && text !== '' && last !== undefined && last.length > 0 && last.every((value) => !String(value).includes(text))
}

/** The values a schema lists (its enum, or its const); undefined where it lists none. */
function listed (schema: JsonSchema | undefined): unknown[] | undefined {
  return Array.isArray(schema?.enum) ? schema.enum : schema?.const !== undefined ? [schema.const] : undefined
}

/** An integer's digits, where the schema takes integers alone. */
function integerPattern (schema: JsonSchema | undefined): string | undefined {
  return schema?.type === 'integer' ? '-?\\d+' : undefined
}

/** A pattern that matches one of `values` and nothing else; none where one is not a segment's text as a URL spells it (RFC 3986's pchar, unescaped). */
function choicePattern (values: unknown[] | undefined): string | undefined {
  const texts = values?.map(String)
  if (texts === undefined || texts.length === 0 || texts.some((text) => !/^[\w\-.~!$&'()*+,;=@]+$/.test(text))) return undefined
  return `(?:${texts.map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`
}

/** The characters of a path template that are its own text, not its parameters'. */
export function literalLength (path: string): number {
  return path.replace(PARAMETER, '').length
}

/** The path with its parameters' values, each escaped for a path: /customers/7/addresses. */
export function concretePath (path: string, values: Record<string, unknown>): string {
  return path.replace(/\{([^{}]+)\}/g, (_whole, name: string) => encodeURIComponent(String(values[name])))
}
