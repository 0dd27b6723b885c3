import { resolve } from 'node:path'
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util'
import type { CheckName } from '../openapi/verify/checks.ts'

// What the commands that judge by the document's checks (verify.ts, proxy.ts) read alike from
// their arguments, and the mistake that makes them print their usage.

export class UsageError extends Error {}

/** True for a mistake in the command (ours, or parseArgs'): answered with the usage. */
export const isUsageError = (err: unknown): boolean => err instanceof UsageError || String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')

export function integer (value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a whole number, not "${value}"`)
  return Number(value)
}

/** The checks of `all` that --checks names (all when absent), less those --exclude-checks names. */
export function checksOf (all: readonly CheckName[], only: string | undefined, excluded: string | undefined): Set<CheckName> {
  const names = (list: string): CheckName[] => list.split(',').map((name) => name.trim()).filter(Boolean).map((name) => {
    if (!(all as readonly string[]).includes(name)) throw new UsageError(`no check is named "${name}" (there are ${all.join(', ')})`)
    return name as CheckName
  })
  const chosen = new Set(only === undefined ? all : names(only))
  for (const name of excluded === undefined ? [] : names(excluded)) chosen.delete(name)
  return chosen
}

// The options both commands take: which checks, and the reports.
const COMMON = {
  checks: { type: 'string' },
  'exclude-checks': { type: 'string' },
  report: { type: 'string' },
  junit: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const satisfies ParseArgsOptionsConfig

/** The command's arguments: a document and a URL (`url` names it, "a base URL"), then its options and COMMON's; undefined for --help. */
export function commandLine<Options extends ParseArgsOptionsConfig> (options: Options, url: string) {
  const { values, positionals } = parseArgs<{ allowPositionals: true, options: Options & typeof COMMON }>({ allowPositionals: true, options: { ...options, ...COMMON } })
  if ((values as { help?: boolean }).help === true) return undefined
  const [document, at] = positionals
  if (document === undefined || at === undefined || positionals.length > 2) throw new UsageError(`a document and ${url}, and nothing else, come before the options`)
  if (!/^https?:\/\/[^/]/.test(at)) throw new UsageError(`${url.replace(/^an? /, 'the ')} must be http:// or https://, not "${at}"`)
  return { values, document, url: at }
}

/** A path as the user gave it, from where they ran the command: npm runs its scripts at the project's root. */
export const fromUser = (file: string): string => resolve(process.env.INIT_CWD ?? process.cwd(), file)
