import { fileOf, type Sections } from './load.ts'
import { allowed } from './section.ts'

// docs/configuration.md, written from the sections themselves (npm run config:docs), so that the
// reference and what the service reads cannot drift apart.

const INTRO = `# Configuration

<!-- Written by \`npm run config:docs\` from each layer's section (src/*/config.ts): change those, then run it. -->

Everything comes from the environment and is checked at start: a start with bad values stops
(exit 1) with one message that names every problem, and a variable that looks like a typo of one
below (\`DATABSE_URL\`, \`STORE_TIMEOUT\`) is one of them. A secret may also be read from a file
(the Docker and Kubernetes convention): \`<NAME>_FILE\` names the file, whose text, less a trailing
newline, is the value; setting both is an error, and a file that other users may read is
refused (it must be the service's own, or root's and readable by the service's group only, as
Kubernetes mounts a Secret for a pod's fsGroup). \`npm run config\` prints the configuration in
force, each value with its source (default, environment or file), secrets redacted.
`

const CHANGES = `## Changes

Since the variables were declared by each layer (they were a table in the README before), every
name, default and meaning is kept, with these changes:

- \`DATABASE_URL_FILE\` and \`MIGRATE_DATABASE_URL_FILE\` are new: a database URL holds a password,
  which orchestrators keep in files.
- A variable that looks like a typo of a declared one stops the start, naming the one it probably
  meant; it was ignored, and the default used in silence.
- \`MIGRATE_DATABASE_URL\` is checked at every start, as every other variable is; only
  \`npm run migrate\` checked it before.
- A secret file of root's that only the service's group may read (0440) is accepted: the shape
  Kubernetes gives a Secret's files for a pod's fsGroup, the only one a non-root pod can read.
`

/** What a variable's schema bounds it to, as a sentence. */
function bounds (schema: Record<string, any>): string {
  const words = allowed(schema, (value) => `\`${value}\``)
  return words === undefined ? '' : ` ${words[0].toUpperCase()}${words.slice(1)}.`
}

const cell = (text: string): string => text.replaceAll('|', '\\|')

export function configReference (sections: Sections): string {
  const parts = [INTRO]
  for (const { title, notes, variables, secrets = [] } of Object.values(sections)) {
    parts.push(`## ${title}\n`, '| Variable | Default | Meaning |', '| --- | --- | --- |')
    for (const [name, schema] of Object.entries<Record<string, any>>(variables)) {
      const variable = secrets.includes(name) ? `\`${name}\` or \`${fileOf(name)}\` (secret)` : `\`${name}\``
      // A description may open with what unset means ("Unset: no metrics. …"): that is its default.
      const [, unset, description] = /^(?:Unset: (.+?)\. )?(.*)$/s.exec(schema.description)!
      const fallback = schema.default !== undefined ? `\`${schema.default}\`` : unset !== undefined ? `*(unset: ${unset})*` : '*(unset)*'
      parts.push(`| ${variable} | ${fallback} | ${cell(description + bounds(schema))} |`)
    }
    if (notes !== undefined) parts.push('', notes)
    parts.push('')
  }
  return [...parts, CHANGES].join('\n')
}
