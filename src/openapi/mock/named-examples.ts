import { jsonText } from '../../http/json-body.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { HandlerInput } from '../routes/register.ts'
import type { ResponseSpec, RouteSpec } from '../routes/routes.ts'
import { examplesOf } from '../schemas/examples.ts'
import type { JsonSchema } from '../schemas/schema.ts'

// Answers chosen by what is asked, as Microcks dispatches: a request whose body equals a named
// example of the request body, or one of whose parameters equals a named example of that
// parameter, is answered with the response example of the same name (whichever status declares
// it: a "not-found" example may be a 404's). Equal as JSON values, an object's keys in any order;
// a parameter's example written as text ("42") equals the value it spells. A value that examples
// of several names share tells none of them apart, and chooses nothing: Azure's descriptions give
// every example the one api-version its parameter allows, and one of them is a 400's. Nor are
// names a table of cases when none of them is a success's: Azure's converted descriptions name
// the example of a create that answers 204 with no body for the only answer with one, its 400.

/** The name of the example a request matches, and the answer that has one of that name; undefined when none does. */
export type Matcher = (input: HandlerInput) => { name: string, response: ResponseSpec } | undefined

/** One spelling of a JSON value for every order of its keys (an integer read exactly past 2^53 by its digits, as jsonText writes it). */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`
  return jsonText(value) ?? 'null'
}

// The name converters give a lone example (DigitalOcean's every parameter and error): it pairs nothing.
const UNNAMED = new Set(['default'])

/** Only the examples a map names (`examples:`), not a single `example` or a schema's. */
const named = (doc: OpenApiDocument, holder: { object: Record<string, any>, schema?: JsonSchema }) => examplesOf(doc, holder).filter(({ name }) => Object.hasOwn(holder.object.examples ?? {}, name) && !UNNAMED.has(name))

const PARTS = { path: 'params', query: 'query', header: 'headers', cookie: 'cookies' } as const

/**
 * Each spelling of a value to the name whose example it is, where that name has an answer. A value
 * examples of several names share (any answer of theirs or none) is left out.
 */
function byValue (examples: Array<{ name: string, value: unknown }>, answers: Map<string, ResponseSpec>, spellings: (value: unknown) => string[]): Map<string, string> {
  const names = new Map<string, Set<string>>()
  for (const { name, value } of examples) for (const spelling of spellings(value)) names.set(spelling, (names.get(spelling) ?? new Set()).add(name))
  const chosen = new Map<string, string>()
  for (const [spelling, [name, ...others]] of names) if (others.length === 0 && answers.has(name)) chosen.set(spelling, name)
  return chosen
}

/** The route's matcher, or undefined when no request example shares its name with a success's example. */
export function namedExamples (doc: OpenApiDocument, route: RouteSpec, order: ResponseSpec[]): Matcher | undefined {
  // Each response example's name, and the first answer (in the order the mock prefers them) that has it.
  const answers = new Map<string, ResponseSpec>()
  for (const response of order) for (const media of response.media) for (const { name } of named(doc, media)) if (!answers.has(name)) answers.set(name, response)
  const bodies = byValue((route.body?.media ?? []).flatMap((media) => named(doc, media)), answers, (value) => [canonical(value)])
  const parameters = route.parameters
    .map((parameter) => ({ parameter, byValue: byValue(named(doc, parameter), answers, (value) => typeof value === 'string' ? [canonical(value), value] : [canonical(value)]) }))
    .filter(({ byValue }) => byValue.size > 0)
  const paired = [...bodies.values(), ...parameters.flatMap(({ byValue }) => [...byValue.values()])]
  if (!paired.some((name) => answers.get(name)!.status.startsWith('2'))) return undefined
  return (input) => {
    let name = input.body === undefined || bodies.size === 0 ? undefined : bodies.get(canonical(input.body))
    for (const { parameter, byValue } of parameters) {
      if (name !== undefined) break
      const value = (input[PARTS[parameter.in]] as Record<string, unknown> | undefined)?.[parameter.name]
      if (value !== undefined) name = byValue.get(canonical(value)) ?? byValue.get(String(value))
    }
    return name === undefined ? undefined : { name, response: answers.get(name)! }
  }
}
