import { readConfig, type ConfigOf, type Env } from './config/load.ts'
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

export { ConfigError } from './config/load.ts'
