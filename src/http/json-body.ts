import type { FastifyRequest } from 'fastify'
import { parse as losslessParse } from 'lossless-json'
import secureJson from 'secure-json-parse'
import { BadJsonError, DuplicateKeyError, EmptyBodyError, ForbiddenKeyError, TooDeepError } from '../errors.ts'

// JSON.parse silently rounds integers beyond 2^53 (9007199254740993 becomes ...992) and keeps
// only the last of duplicate keys. One cheap pass over the text (scan) finds what JSON.parse
// cannot tell us: how deep the body nests, how many keys it spells, and whether any number
// could lose precision. Only the rare body with such a number is parsed again, losslessly.

export const MAX_DEPTH = 32
const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// Digits beyond which an integer is outside int64 whatever its digits are.
const MAX_INTEGER_DIGITS = 20
// A number literal of at most 15 digits (and dots) and no exponent is always below 2^53 and exact.
const SAFE_RUN = 15

interface Scan { keys: number, mayLosePrecision: boolean }

// Character codes the scan looks for. (Constants, not a const enum: tsconfig's erasableSyntaxOnly
// keeps the source to what Node's type stripping runs.)
const QUOTE = 34
const BACKSLASH = 92
const COLON = 58
const OPEN_BRACE = 123
const OPEN_BRACKET = 91
const CLOSE_BRACE = 125
const CLOSE_BRACKET = 93
const DOT = 46
const ZERO = 48
const NINE = 57
const LOWER_E = 101
const UPPER_E = 69

function scan (text: string, maxDepth = MAX_DEPTH): Scan {
  let keys = 0
  let depth = 0
  let run = 0 // digits and dots in a row, outside strings
  let mayLosePrecision = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // Skip the string, and its escapes.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i)
        if (s === BACKSLASH) i++
        else if (s === QUOTE) break
      }
      run = 0
    } else if ((c >= ZERO && c <= NINE) || c === DOT) {
      if (++run > SAFE_RUN) mayLosePrecision = true
    } else {
      if ((c === LOWER_E || c === UPPER_E) && run > 0) mayLosePrecision = true
      else if (c === COLON) keys++
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++depth > maxDepth) throw new TooDeepError(maxDepth)
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
      run = 0
    }
  }
  return { keys, mayLosePrecision }
}

function countKeys (value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  let keys = 0
  if (Array.isArray(value)) {
    for (const item of value) keys += countKeys(item)
  } else {
    for (const key in value) keys += 1 + countKeys((value as Record<string, unknown>)[key])
  }
  return keys
}

/** Whether the text is JSON, a byte order mark aside (secure-json-parse reads past one too). */
function isJson (text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ''))
    return true
  } catch {
    return false
  }
}

export function parseJsonBody (text: string): unknown {
  const { keys, mayLosePrecision } = scan(text)
  let value: unknown
  try {
    // secure-json-parse is JSON.parse plus a refusal of __proto__ and constructor.prototype keys.
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    if (text.trim() === '') throw new EmptyBodyError()
    // JSON all the same: refused for a key that would change an object's prototype.
    if (isJson(text)) throw new ForbiddenKeyError((err as Error).message)
    throw new BadJsonError((err as Error).message)
  }
  // Every key is followed by one colon outside strings: fewer keys parsed means duplicates.
  if (countKeys(value) !== keys) throw new DuplicateKeyError()
  return mayLosePrecision ? losslessParse(text, null, exactNumber) : value
}

/**
 * JSON as a service answers it, read as parseJsonBody reads a request's: an integer beyond 2^53
 * exact (a bigint: an int64 id of Go's or Java's, which JSON.parse would round into another
 * id), without the bounds a request is held to. Duplicate keys, which the lossless parser
 * refuses, are read as JSON.parse reads them.
 */
export function parseExactJson (text: string): unknown {
  const value = JSON.parse(text)
  if (!scan(text, Infinity).mayLosePrecision) return value
  try {
    return losslessParse(text, null, exactNumber)
  } catch {
    return value
  }
}

/**
 * JSON Schema's rule: an integer is a number with no fractional part, however it is spelled,
 * so 1e3 is the integer 1000. An integer beyond 2^53 becomes a bigint; any other number a double.
 * A fraction so close to an integer that the nearest double is whole becomes NaN, which no
 * numeric schema accepts, rather than a wrong integer.
 */
export function exactNumber (literal: string): number | bigint {
  const [, sign, whole, fraction = '', exponent = '0'] = NUMBER_LITERAL.exec(literal) ?? []
  const double = Number(literal)
  // The value is sign × digits × 10^scale, with no leading or trailing zeros in digits.
  const padded = (whole + fraction).replace(/^0+/, '')
  const digits = padded.replace(/0+$/, '')
  const scale = Number(exponent) - fraction.length + (padded.length - digits.length)
  if (digits === '') return double
  if (scale < 0) return Number.isInteger(double) ? NaN : double
  if (digits.length + scale > MAX_INTEGER_DIGITS) return double
  const integer = BigInt(sign + digits + '0'.repeat(scale))
  return Number.isSafeInteger(double) ? double : integer
}

/** JSON text of a value parseJsonBody made: a bigint written as the exact integer it was read from, not refused as JSON.stringify refuses it. */
export function jsonText (value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => typeof inner === 'bigint' ? (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON(inner.toString()) : inner)
}

export function jsonBodyParser (_request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
  try {
    done(null, parseJsonBody(body))
  } catch (err) {
    done(err as Error)
  }
}
