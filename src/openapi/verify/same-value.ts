import type { OpenApiDocument } from '../document/document.ts'
import { propertiesOf } from '../routes/resources.ts'
import { derefSchema } from '../schemas/schema.ts'
import { isObject } from '../schemas/schema-at.ts'

// Whether what a service answers holds what was written to it. A store keeps some values in a
// spelling of its own and answers the same value otherwise spelled; where the read's schema gives
// the format, that is no change: a date-time read as the same instant (`2019-08-24T14:15:22Z` as
// `…22.000Z` or `…22+00:00`, as JavaScript's Date, PostgreSQL or Python write it), a float
// (`format: float`) as float32 keeps it (`0.1` as `0.10000000149011612`), a uri as a URL parser
// writes it (`https://a.example` as `https://a.example/`), a uuid in either case; a list of unique
// items (`uniqueItems`) in any order. A double past 2^53, read exactly as the integer it spells,
// is that double. Anything else must come back as it was sent.

/** The document and the read's schema of a value, where the comparison knows them. */
export interface ReadAs { doc: OpenApiDocument, schema: unknown }

const url = (text: string): string | undefined => URL.canParse(text) ? new URL(text).href : undefined

/** Whether two values of `format`, not equal as sent, are the same value spelled two ways. */
function sameIn (format: unknown, read: unknown, written: unknown): boolean {
  if (typeof read === 'number' && typeof written === 'number') return format === 'float' && Math.fround(read) === Math.fround(written)
  if (typeof read !== 'string' || typeof written !== 'string') return false
  switch (format) {
    case 'date-time': {
      const instant = Date.parse(written)
      return !Number.isNaN(instant) && Date.parse(read) === instant
    }
    case 'uri': case 'url': return url(written) !== undefined && url(read) === url(written)
    case 'uuid': return read.toLowerCase() === written.toLowerCase()
    default: return false
  }
}

/**
 * Whether `read` holds what was written: an object's every member (of those the read's schema,
 * where given, names and answers), whatever the server added beside them; a list's every item so
 * (in order, but for a set's); anything else equal as sent (a -0 drawn is sent as 0), or, by the
 * read's schema where given (`as`), the same value in the store's spelling.
 */
export function holds (read: unknown, written: unknown, as?: ReadAs): boolean {
  const schema = as === undefined ? undefined : derefSchema(as.doc, as.schema)
  const at = (inner: unknown): ReadAs | undefined => as === undefined || inner === undefined ? undefined : { doc: as.doc, schema: inner }
  // A value one of several shapes (a nullable date-time of 3.0's anyOf, say): held as any of them holds it.
  if (isObject(schema) && [...(schema.anyOf as unknown[] ?? []), ...(schema.oneOf as unknown[] ?? [])].some((branch) => holds(read, written, at(branch)))) return true
  if (Array.isArray(written)) {
    if (!Array.isArray(read) || read.length !== written.length) return false
    // A list's item left undefined (a sampler's, past its depth, where the schema takes null) is sent as null.
    const sent = written.map((value) => value === undefined ? null : value)
    const items = (i: number) => at((schema?.prefixItems as unknown[] | undefined)?.[i] ?? schema?.items)
    if (schema?.uniqueItems === true && schema.prefixItems === undefined) {
      // A list of unique items is a set to most stores (a join table, a set type): held in any order.
      const left = [...read]
      return sent.every((value) => {
        const found = left.findIndex((item) => holds(item, value, items(0)))
        return found !== -1 && left.splice(found, 1).length === 1
      })
    }
    return sent.every((value, i) => holds(read[i], value, items(i)))
  }
  if (isObject(written)) {
    const declared = as === undefined ? {} : propertiesOf(as.doc, schema)
    const additional = isObject(schema?.additionalProperties) ? schema.additionalProperties : undefined
    const named = Object.keys(declared).length > 0
    return isObject(read) && Object.entries(written).every(([name, value]) => {
      const property = as === undefined ? undefined : derefSchema(as.doc, declared[name])
      // What the read's schema promises, at every depth as at the item's: not a member it does not
      // name (a serializer leaves it out), nor the server's own (readOnly), nor one never read (writeOnly).
      if (property === undefined ? named && additional === undefined : property.readOnly === true || property.writeOnly === true) return true
      return holds(read[name], value, at(declared[name] ?? additional))
    })
  }
  // A number written as a double and read exactly (an integer past 2^53, a bigint: 9.8e16, 1e202):
  // the same double is the same number.
  if (typeof read === 'bigint' && typeof written === 'number') return Number(read) === written
  return read === written || (isObject(schema) && sameIn(schema.format, read, written))
}

/** Two values alike as JSON sends them, whatever their objects' prototypes (a form the engine reads back has none), and by the read's schema where given. */
export const alike = (a: unknown, b: unknown, as?: ReadAs): boolean => holds(a, b, as) && holds(b, a, as)
