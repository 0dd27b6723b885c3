// Preloaded on Node 22 into every process of a test run, first (scripts/with-postgres.ts): each
// of our TypeScript modules as Node's own type stripping makes it, kept on disk by its source.
// Node 24 and 26 keep that in their compile cache (nodejs/node#56629); Node 22 strips every module
// again in every process, and loads the stripper (a WebAssembly build of swc) for it: some 0.3 s
// of CPU in a test process that builds the app, 7 to 22 s of npm test's 145 on Node 22
// (docs/changing-the-api.md). JavaScript, not TypeScript: a .ts here would load the stripper in
// every process, which is what it saves.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { registerHooks, stripTypeScriptTypes } from 'node:module'
import { threadId } from 'node:worker_threads'

const folder = new URL('../../node_modules/.cache/stripped-ts/', import.meta.url)
mkdirSync(folder, { recursive: true })

/** The module's source, stripped as Node strips it; what it says of stripTypeScriptTypes being experimental is not the test's output. */
function stripped (source) {
  const key = createHash('sha256').update(process.version).update('\0').update(source).digest('hex')
  const file = new URL(`${key}.js`, folder)
  try {
    return readFileSync(file, 'utf8')
  } catch {
    const { emitWarning } = process
    process.emitWarning = () => {}
    let code
    try {
      code = stripTypeScriptTypes(source, { mode: 'strip' })
    } finally {
      process.emitWarning = emitWarning
    }
    // Written whole, then renamed: processes side by side read one file or none, never half.
    const partial = new URL(`${key}.${process.pid}.${threadId}`, folder)
    writeFileSync(partial, code)
    renameSync(partial, file)
    return code
  }
}

registerHooks({
  load (url, context, nextLoad) {
    const loaded = nextLoad(url, context)
    // Only what Node itself would strip: TypeScript in node_modules it refuses, and so do we.
    if (loaded.format !== 'module-typescript' || url.includes('/node_modules/')) return loaded
    const source = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source)
    return { ...loaded, format: 'module', source: stripped(source) }
  }
})
