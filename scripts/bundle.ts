// npm run build's second step: links the service tsc emitted in dist/ into a few files in
// dist/bundle/, which `npm start` runs. A start then reads a few dozen files instead of about 530,
// each resolved, read and compiled on its own (docs/performance.md, "Start-up and memory").
// Features loaded only when configured stay in chunks of their own, loaded as before.
// Left to Node, from node_modules:
// - better-sqlite3: a native addon;
// - pg and @opentelemetry/instrumentation-pg: the instrumentation wraps pg as Node loads it. The
//   rest of OpenTelemetry is bundled, cut to what is used (its semantic conventions' thousands of
//   names to a few): 2.4 MB less heap with traces on (docs/performance.md, "Traces"). The
//   instrumentation's own copy of the API, from node_modules, finds the provider the bundle's
//   registered: the API keeps it in a global, under a Symbol.for key.
// The bundle sits two levels below the root, as dist/store/ does, so what our modules find from
// import.meta.url (the SQLite worker beside its starter) is found; openapi.yaml is found from the
// nearest package.json above.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { loadDocument, prebundle, PREBUNDLED_PATH } from '../src/openapi/document/document.ts'

const OUT = 'dist/bundle'

// CommonJS modules that read files beside them (Swagger UI its page and assets, @fastify/swagger
// its package.json) ask __dirname, which no module in a bundle has: each is given its own folder
// in node_modules back, found from the bundle's.
const ownFolders: Plugin = {
  name: 'own-folders',
  setup (build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8')
      if (!/\b__(dirname|filename)\b/.test(source)) return undefined
      const folder = JSON.stringify(relative(resolve(OUT), dirname(path)))
      const file = JSON.stringify(relative(resolve(OUT), path))
      return { contents: `var __dirname = require('node:path').join(__bundle, ${folder}), __filename = require('node:path').join(__bundle, ${file});\n${source}`, loader: 'js' }
    })
  }
}

// Chunks are named by their content: a rebuild's would sit beside the last one's.
rmSync(OUT, { recursive: true, force: true })
await build({
  entryPoints: ['dist/server.js', 'dist/store/sqlite-worker.js'],
  outdir: OUT,
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: ['better-sqlite3', 'pg', '@opentelemetry/instrumentation-pg'],
  // The CommonJS dependencies call require(), which an ES module must make for itself.
  banner: { js: 'import { createRequire } from \'node:module\'; const require = createRequire(import.meta.url); const __bundle = import.meta.dirname;' },
  plugins: [ownFolders],
  // Through tsc's maps, to the TypeScript lines.
  sourcemap: 'linked',
  logLevel: 'warning'
})

// openapi.yaml read now (and bundled, when it refers to other files), so that a start parses one JSON
// file and loads no YAML parser nor bundler (document.ts takes it while every file it was made of is
// unchanged).
rmSync(PREBUNDLED_PATH, { force: true })
writeFileSync(PREBUNDLED_PATH, JSON.stringify(prebundle(await loadDocument(undefined, { prebundled: '' }))))
