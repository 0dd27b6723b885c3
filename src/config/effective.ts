import { fileOf, readConfig, type Sections } from './load.ts'
import { redact } from './redact.ts'
import type { Env } from './section.ts'

// The configuration in force, for an operator asking "why does it do that?": every variable with
// its value and where it came from, each section in turn, secrets redacted (redact.ts).

/** The lines `npm run config` prints; throws the ConfigError the service would stop with. */
export function effectiveConfig (sections: Sections, env: Env): string[] {
  const { values, sources } = readConfig(sections, env)
  const lines: string[] = []
  for (const { title, variables, secrets = [] } of Object.values(sections)) {
    lines.push(`# ${title}`)
    for (const name of Object.keys(variables)) {
      const value = values[name]
      const shown = value === undefined ? '(unset)' : secrets.includes(name) ? redact(String(value)) : String(value)
      const source = sources.get(name)!
      lines.push(`${name}=${shown}   # ${source === 'file' ? `from ${fileOf(name)} (${env[fileOf(name)]})` : source}`)
    }
    lines.push('')
  }
  return lines
}
