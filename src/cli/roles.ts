// The container image's entry point: one image, every role. No argument (or `serve`) serves;
// `migrate`, `copy-store FROM TO`, `config`, `mock DOCUMENT [--stateless]`, `verify DOCUMENT BASE-URL`
// and `proxy DOCUMENT UPSTREAM-URL` run those commands, each as its npm script would.

// Named without their extension: this file's own is theirs, .js as compiled into dist/ (the
// image), .ts where Node runs the source (the tests).
const ROLES: Record<string, string> = {
  serve: '../bundle/server',
  migrate: './migrate',
  'copy-store': './copy-store',
  config: './config',
  mock: './mock',
  verify: './verify',
  proxy: './proxy'
}
const extension = import.meta.url.slice(import.meta.url.lastIndexOf('.'))

const role = process.argv[2] ?? 'serve'
const module = ROLES[role]
if (module === undefined) {
  console.error(`usage: [serve] | migrate | copy-store FROM TO | config | mock DOCUMENT [--stateless] | verify DOCUMENT BASE-URL | proxy DOCUMENT UPSTREAM-URL   (got "${role}")`)
  process.exit(2)
}
// The command reads its own arguments after its name, as it does when npm runs it.
process.argv.splice(2, 1)
await import(new URL(module + extension, import.meta.url).href)
