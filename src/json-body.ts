import type { FastifyRequest } from 'fastify'
import { parse as losslessParse } from 'lossless-json'
import secureJson from 'secure-json-parse'
import { BadJsonError, EmptyBodyError } from './errors.js'

// JSON.parse silently rounds integers beyond 2^53 (9007199254740993 becomes ...992).
// A body whose text holds no number that could lose precision is parsed by JSON.parse alone;
// only the rare body with a 16+ digit run or an exponent is parsed again, losslessly.
// A number literal of at most 15 digits and no exponent is always below 2^53 and exact.
const MAY_LOSE_PRECISION = /\d[\d.]{15}|[\d.][eE]/
const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// Digits beyond which an integer is outside int64 whatever its digits are.
const MAX_INTEGER_DIGITS = 20

export function parseJsonBody (text: string): unknown {
  let value: unknown
  try {
    // secure-json-parse is JSON.parse plus a refusal of __proto__ and constructor.prototype keys.
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    throw text.trim() === '' ? new EmptyBodyError() : new BadJsonError((err as Error).message)
  }
  return MAY_LOSE_PRECISION.test(text) ? losslessParse(text, null, exactNumber) : value
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

export function jsonBodyParser (_request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void): void {
  try {
    done(null, parseJsonBody(body))
  } catch (err) {
    done(err as Error)
  }
}
