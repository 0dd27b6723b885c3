import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// Type-level tests: each fixture holds one mistake the compiler must reject.
const root = fileURLToPath(new URL('../../', import.meta.url))
const fixtures = fileURLToPath(new URL('./type-fixtures/', import.meta.url))
const { config } = ts.readConfigFile(root + 'tsconfig.json', ts.sys.readFile)
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root)

function diagnostics (file: string): string[] {
  const program = ts.createProgram([fixtures + file], options)
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

const expected: Record<string, RegExp> = {
  'valid.ts': /^$/,
  'missing-handler.ts': /Property 'createPlant' is missing/,
  'extra-handler.ts': /'deletePlant' does not exist in type 'Handlers'/,
  'wrong-body.ts': /Property 'name' is missing in type '\{ title: string; \}'/,
  'undeclared-status.ts': /Type '418' is not assignable/
}

t.same(readdirSync(fixtures).sort(), Object.keys(expected).sort(), 'every fixture has an expectation')

for (const [file, pattern] of Object.entries(expected)) {
  t.test(file, async (t) => {
    const messages = diagnostics(file)
    if (file === 'valid.ts') {
      t.same(messages, [], 'compiles')
    } else {
      t.equal(messages.length, 1, 'exactly one error', { messages })
      t.match(messages.join('\n'), pattern)
    }
  })
}
