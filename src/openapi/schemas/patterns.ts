import { createRequire as requireFrom } from 'node:module'
import isSafe from 'safe-regex2'

// The patterns a document gives its strings, as the validators run them. ECMAScript's engine
// backtracks, and a pattern with nested quantifiers, `([\w.-]*)*`, takes exponential time on a
// string that almost matches: one request would hold the event loop for minutes (a published
// description in APIs.guru's directory has that one). So a pattern that safe-regex2 (the check
// find-my-way runs on Fastify's own route patterns) does not pass runs on RE2JS, a port of RE2,
// which matches in time linear in the string; every other pattern, and one RE2 cannot read
// (lookarounds, backreferences, \u escapes), on ECMAScript's, as Ajv would run it.

/** What Ajv asks of a pattern: a test of a string, and a name (Ajv keeps patterns by it). */
export interface Pattern { test: (text: string) => boolean, toString: () => string }

// Loaded with the first pattern that needs it: most documents have none.
const load = requireFrom(import.meta.url)
let re2: typeof import('re2js') | undefined

/** A pattern as ECMAScript reads it: in Unicode mode, else without it; one that neither reads matches anything. */
function ecmaScript (pattern: string, flags: string): Pattern {
  for (const attempt of [flags, flags.replace('u', '')]) {
    try {
      return new RegExp(pattern, attempt)
    } catch {}
  }
  return /(?:)/
}

/** A document's pattern, compiled to run in bounded time where it could run away. Ajv's `code.regExp`. */
export function documentPattern (pattern: string, flags: string): Pattern {
  if (isSafe(pattern)) return ecmaScript(pattern, flags)
  try {
    re2 ??= load('re2js') as typeof import('re2js')
    const compiled = re2.RE2JS.compile(pattern)
    // Ajv keeps each compiled pattern under its toString(): each its own, as a RegExp's is.
    return { test: (text) => compiled.test(text), toString: () => `re2js:/${pattern}/` }
  } catch {
    return ecmaScript(pattern, flags)
  }
}
documentPattern.code = 'documentPattern'
