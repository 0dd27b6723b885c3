import type { ErrorObject } from 'ajv/dist/2020.js'
import type { OpenApiDocument } from '../document/document.ts'
import { propertySchema } from '../requests/request-validation.ts'
import { propertiesOf } from '../routes/resources.ts'
import { derefSchema } from './schema.ts'

// Where a value's part is (a JSON pointer's tokens) and where its schema declares it, for the mock
// and the sampler when they mend a value the validator refused at one place of it.

/** A JSON pointer's tokens (RFC 6901), as Ajv writes an instancePath (not percent-encoded): '' names the value itself. */
export const tokensOf = (pointer: string): string[] => pointer.split('/').slice(1).map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))

/** A JSON object: not null, not a list. */
export const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * The refusal to mend first: several branches of a oneOf taking the value, where there is one. The
 * errors before it are those of the branches that do not take it, and mending those would only make
 * more of them take it. The last such: Ajv reports a oneOf's refusal after its branches' own, so a
 * oneOf within a branch that does not take the value (Zoom's account settings) comes before the
 * one around it, and mending it would mend only that branch. Else the first.
 */
export const errorToMend = (errors: ErrorObject[] | null | undefined): ErrorObject | undefined =>
  errors?.filter((each) => each.keyword === 'oneOf' && Array.isArray(each.params.passingSchemas)).at(-1) ?? errors?.[0]

/** The branches of the oneOf a schema holds, itself or in a part of its allOf; undefined where it holds none. */
export function oneOfIn (doc: OpenApiDocument, schema: unknown): unknown[] | undefined {
  const s = derefSchema(doc, schema)
  return [s, ...(s?.allOf ?? []).map((part: unknown) => derefSchema(doc, part))].find((part) => Array.isArray(part?.oneOf))?.oneOf
}

/**
 * The schema of what `tokens` name in `value` (a property, an item), as `schema` declares it:
 * through allOf (AWS's lists, an allOf of the list and its description); of a oneOf or anyOf,
 * the branch its discriminator's value names, else the first that declares the next step
 * (Ably's kafka rule: its target's, not the first branch's).
 */
export function schemaAt (doc: OpenApiDocument, schema: unknown, value: unknown, tokens: string[]): unknown {
  let at = derefSchema(doc, schema)
  for (const token of tokens) {
    const branches: unknown[] = [...at?.oneOf ?? [], ...at?.anyOf ?? []]
    const { propertyName, mapping } = at?.discriminator ?? {}
    const named = isObject(value) && typeof propertyName === 'string' ? String(mapping?.[String(value[propertyName])] ?? value[propertyName]) : undefined
    const ref = (branch: any): string => typeof branch?.$ref === 'string' ? branch.$ref : ''
    const branch = branches.find((b) => named !== undefined && (ref(b) === named || ref(b).endsWith(`/${named}`))) ?? branches.find((b) => token in propertiesOf(doc, b))
    if (branch !== undefined) at = derefSchema(doc, branch)
    const parts: any[] = [at, ...(at?.allOf ?? []).map((part: unknown) => derefSchema(doc, part))]
    const next = Array.isArray(value) ? parts.map((part) => part?.prefixItems?.[Number(token)] ?? part?.items).find((inner) => inner !== undefined) : propertySchema(doc, at, token)
    if (next === undefined) return undefined
    at = derefSchema(doc, next)
    value = (value as any)?.[token]
  }
  return at
}
