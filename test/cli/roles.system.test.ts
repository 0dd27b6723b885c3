import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// The image's entry point (src/cli/roles.ts), as a process: a role runs its command with the
// arguments after its name; anything else is refused with the usage. The image's suite runs it
// in the image (npm run test:image), serving and migrating too.
const roles = fileURLToPath(new URL('../../src/cli/roles.ts', import.meta.url))
const run = (...args: string[]) => spawnSync(process.execPath, [roles, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, PORT: '8081' } })

t.test('a role runs its command, with its own arguments', async (t) => {
  const config = run('config')
  t.equal(config.status, 0, config.stderr)
  t.match(config.stdout, 'PORT=8081   # environment', 'config, as npm run config prints it')
  const copy = run('copy-store', 'sqlite:/nonexistent/a.db')
  t.equal(copy.status, 2, 'copy-store reads the arguments after its name: one is missing')
  t.match(copy.stderr, /^usage: npm run copy-store/)
  const mock = run('mock')
  t.equal(mock.status, 2, 'mock reads the arguments after its name: the document is missing')
  t.match(mock.stderr, /^Usage: npm run mock -- <document>/)
  const verify = run('verify', 'openapi.yaml')
  t.equal(verify.status, 2, 'verify reads the arguments after its name: the base URL is missing')
  t.match(verify.stderr, /^a document and a base URL[^]*Usage: npm run verify -- <document> <base-url>/)
  const proxy = run('proxy', 'openapi.yaml', 'ftp://upstream')
  t.equal(proxy.status, 2, 'proxy reads the arguments after its name: the upstream is no HTTP URL')
  t.match(proxy.stderr, /^the upstream URL must be http:\/\/ or https:\/\/, not "ftp:\/\/upstream"[^]*Usage: npm run proxy -- <document> <upstream-url>/)
})

t.test('an unknown role is refused, with the usage', async (t) => {
  const unknown = run('shell')
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, 'usage: [serve] | migrate | copy-store FROM TO | config | mock DOCUMENT [--stateless] | verify DOCUMENT BASE-URL | proxy DOCUMENT UPSTREAM-URL   (got "shell")')
})
