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

/** An http:// or https:// URL, else a usage error that says which argument. */
export function baseUrlOf (value: string, what: string): string {
  if (!/^https?:\/\/[^/]/.test(value)) throw new UsageError(`${what} must be http:// or https://, not "${value}"`)
  return value
}
