// Run once while the image is built, as the user the service runs as (the cache's folder is
// named for its uid): compiles every module a start loads, so that Node's compile cache
// (NODE_COMPILE_CACHE) in the image holds them and the first start reads compiled code. The
// entry points are left out: the server would start, the SQLite worker expects its thread.
import { readdirSync } from 'node:fs'
import { flushCompileCache } from 'node:module'

const bundle = new URL('./dist/bundle/', import.meta.url)
for (const file of readdirSync(bundle).filter((name) => name.endsWith('.js')).sort()) {
  if (file === 'server.js' || file === 'sqlite-worker.js') continue
  await import(new URL(file, bundle).href)
}
flushCompileCache()
