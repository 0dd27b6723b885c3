import { readFileSync } from 'node:fs'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface Config {
  port: number
  host: string
  databaseUrl: string
  /** Most connections each instance opens to PostgreSQL. */
  pgPoolSize: number
  /** The accepted bearer tokens. Empty means "generate one at start" (see server.ts). */
  apiTokens: string[]
  logLevel: LogLevel
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/plants.db'
export const DEFAULT_PG_POOL_SIZE = 10
export const MIN_TOKEN_LENGTH = 16

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// RFC 6750 b64token characters: a token with anything else could never be sent in a header.
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/

export class ConfigError extends Error {
  constructor (problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

/**
 * Reads the service's configuration from an environment. Pure apart from reading
 * API_TOKENS_FILE, and throws one ConfigError listing every problem found.
 */
export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = []

  const port = Number(env.PORT ?? 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`)
  }

  const host = env.HOST ?? '127.0.0.1'
  if (host.trim() === '') problems.push('HOST must not be empty')

  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    problems.push(`DATABASE_URL must look like sqlite:<path> or postgres://user:password@host:port/database, got "${redactUrl(databaseUrl)}"`)
  }

  const pgPoolSize = Number(env.PG_POOL_SIZE ?? DEFAULT_PG_POOL_SIZE)
  if (!Number.isInteger(pgPoolSize) || pgPoolSize < 1 || pgPoolSize > 1000) {
    problems.push(`PG_POOL_SIZE must be an integer from 1 to 1000, got "${env.PG_POOL_SIZE}"`)
  }

  const logLevel = (env.LOG_LEVEL ?? 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  }

  const apiTokens = readTokens(env, problems)

  if (problems.length > 0) throw new ConfigError(problems)
  return { port, host, databaseUrl, pgPoolSize, apiTokens, logLevel }
}

/** A database URL fit for messages and logs: any password is masked. */
export function redactUrl (url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*:)[^@]*@/, '$1***@')
}

function readTokens (env: Record<string, string | undefined>, problems: string[]): string[] {
  if (env.API_TOKENS !== undefined && env.API_TOKENS_FILE !== undefined) {
    problems.push('set either API_TOKENS or API_TOKENS_FILE, not both')
    return []
  }
  let source: string
  let raw: string[]
  if (env.API_TOKENS_FILE !== undefined) {
    source = 'API_TOKENS_FILE'
    try {
      raw = readFileSync(env.API_TOKENS_FILE, 'utf8').split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#'))
    } catch (err) {
      problems.push(`API_TOKENS_FILE cannot be read: ${(err as Error).message}`)
      return []
    }
  } else if (env.API_TOKENS !== undefined) {
    source = 'API_TOKENS'
    raw = env.API_TOKENS.split(',')
  } else {
    return []
  }

  if (raw.length === 0) problems.push(`${source} holds no token`)
  raw.forEach((token, i) => {
    if (token.length < MIN_TOKEN_LENGTH) {
      problems.push(`${source}: token #${i + 1} is shorter than ${MIN_TOKEN_LENGTH} characters`)
    } else if (!TOKEN_PATTERN.test(token)) {
      problems.push(`${source}: token #${i + 1} has characters other than letters, digits and -._~+/ (with trailing =)`)
    }
  })
  return raw
}
