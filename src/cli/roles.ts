// The container image's entry point: one image, every role. No argument (or `serve`) serves;
// `migrate`, `copy-store FROM TO`, `config` and `mock DOCUMENT` run those commands, each as its
// npm script would.
const ROLES: Record<string, string> = {
  serve: '../bundle/server.js',
  migrate: './migrate.js',
  'copy-store': './copy-store.js',
  config: './config.js',
  mock: './mock.js'
}

const role = process.argv[2] ?? 'serve'
const module = ROLES[role]
if (module === undefined) {
  console.error(`usage: [serve] | migrate | copy-store FROM TO | config | mock DOCUMENT   (got "${role}")`)
  process.exit(2)
}
// The command reads its own arguments after its name, as it does when npm runs it.
process.argv.splice(2, 1)
await import(new URL(module, import.meta.url).href)
