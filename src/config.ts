import { ConfigError, readConfig, type ConfigOf, type Env } from './config/load.ts'
import { httpConfig } from './http/config.ts'
import { opsConfig } from './ops/config.ts'
import { securityConfig } from './security/config.ts'
import { storeConfig } from './store/config.ts'

// The service's configuration: each layer's own section, joined. The entry points read it, and
// hand each layer its section; no layer imports this file.

export const SECTIONS = { http: httpConfig, store: storeConfig, security: securityConfig, ops: opsConfig }

export type Config = ConfigOf<typeof SECTIONS>

/** Reads the whole configuration from an environment; throws one ConfigError naming every problem. */
export const loadConfig = (env: Env): Config => readConfig(SECTIONS, env).config

/** The configuration, or, where it is wrong, every problem on stderr and exit 1: how the server and the mock start. */
export function loadConfigOrExit (env: Env): Config {
  try {
    return loadConfig(env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }
}

export { ConfigError }
