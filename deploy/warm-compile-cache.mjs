// Run once while the image is built, as the user the service runs as (the cache's folder is
// named for its uid): compiles every module a start loads, so that Node's compile cache in the
// image holds them and the first start reads compiled code. The entry points are left out: the
// server would start, the SQLite worker expects its thread. So is tracing's chunk, which loads
// OpenTelemetry's SDK only when traces are on: the yaml modules its configuration requires came
// out other bytes from one build of a commit to the next (2 modules of yaml's, then 28), where
// every other module's came out the same; a start with traces on compiles them.
//   node --predictable warm-compile-cache.mjs CACHE-FOLDER
// The modules are compiled in a child whose environment is fixed (it holds NODE_COMPILE_CACHE
// alone), so that nothing of the build's (its container's random HOSTNAME) is in the process.
import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { flushCompileCache } from 'node:module'
import { fileURLToPath } from 'node:url'

if (process.env.NODE_COMPILE_CACHE === undefined) {
  execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { stdio: 'inherit', env: { NODE_COMPILE_CACHE: process.argv[2] } })
} else {
  const bundle = new URL('./dist/bundle/', import.meta.url)
  for (const file of readdirSync(bundle).filter((name) => name.endsWith('.js')).sort()) {
    if (file === 'server.js' || file === 'sqlite-worker.js' || file.startsWith('tracing-')) continue
    await import(new URL(file, bundle).href)
  }
  flushCompileCache()
}
