import { writeFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

// Preloaded (`--import`) into a service process a test starts: records the URL of every module the
// process resolves, and writes them to RECORD_MODULES_TO when it exits. So a test can tell which
// libraries a configuration loads, and that a feature that is off loads none of its own.

const resolved = new Set<string>()
registerHooks({
  resolve (specifier, context, nextResolve) {
    const result = nextResolve(specifier, context)
    resolved.add(result.url)
    return result
  }
})
process.on('exit', () => writeFileSync(process.env.RECORD_MODULES_TO!, [...resolved].join('\n')))
