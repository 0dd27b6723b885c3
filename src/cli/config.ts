// npm run config: prints the configuration the service would run with in this environment, each
// value with its source (default, environment, file), secrets redacted. Exit 1, with every
// problem named, where the service would refuse to start.
import { SECTIONS } from '../config.ts'
import { ConfigError } from '../config/load.ts'
import { effectiveConfig } from '../config/effective.ts'

try {
  console.log(effectiveConfig(SECTIONS, process.env).join('\n'))
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  console.error(err.message)
  process.exitCode = 1
}
