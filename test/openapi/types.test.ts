import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// Type-level tests on a document of the fixtures' own (type-fixtures/openapi.yaml), so they hold
// whatever operations the service's document has. Each fixture but valid.ts holds one mistake,
// marked `@ts-expect-error`: `npm run check` type-checks them as they are (a mistake the compiler
// stops seeing fails it), and this test removes the marks to read the compiler's own message.
const root = fileURLToPath(new URL('../../', import.meta.url))
const fixtures = fileURLToPath(new URL('./type-fixtures/', import.meta.url))
const { config } = ts.readConfigFile(root + 'tsconfig.json', ts.sys.readFile)
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root)
const EXPECT_ERROR = /^\s*\/\/ @ts-expect-error.*\n/gm

// What both compilations read besides the fixtures (the libraries' types, the generated ones), parsed once.
const parsed = new Map<string, ts.SourceFile | undefined>()

/** The compiler's messages for each fixture, all compiled at once, with or without their @ts-expect-error marks. */
function diagnostics (files: string[], unmarked: boolean): Map<string, string[]> {
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, ...rest) => {
    if (name.startsWith(fixtures)) return getSourceFile(name, ...rest)
    if (!parsed.has(name)) parsed.set(name, getSourceFile(name, ...rest))
    return parsed.get(name)
  }
  const readFile = host.readFile.bind(host)
  host.readFile = (name) => {
    const text = readFile(name)
    return unmarked && name.startsWith(fixtures) ? text?.replace(EXPECT_ERROR, '') : text
  }
  const program = ts.createProgram(files.map((file) => fixtures + file), options, host)
  const byFile = new Map(files.map((file) => [file, [] as string[]]))
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const file = d.file === undefined ? '(global)' : d.file.fileName.slice(fixtures.length)
    byFile.set(file, [...(byFile.get(file) ?? []), ts.flattenDiagnosticMessageText(d.messageText, '\n')])
  }
  return byFile
}

const expected: Record<string, RegExp> = {
  'valid.ts': /^$/,
  'missing-handler.ts': /Property 'getThing' is missing/,
  'extra-handler.ts': /'deleteThing' does not exist in type 'HandlersOf<operations>'/,
  'wrong-body.ts': /Property 'name' is missing in type '\{ title: string; \}'/,
  'undeclared-status.ts': /Type '418' is not assignable/,
  'wrong-parameter.ts': /Property 'name' does not exist on type '\{ id: number \| bigint; \}'/,
  // answers.yaml: optional parameters, default and a range (#62's items 8 and 9).
  'answers-valid.ts': /^$/,
  'default-body.ts': /Type 'Promise<\{ status: 200; body: \{ code: number; message: string; \}; \}>' is not assignable/,
  'range-status.ts': /Type 'Promise<\{ status: 503; body: \{ code: number; message: string; \}; \}>' is not assignable/,
  'range-body.ts': /Type 'Promise<\{ status: 404; body: \{ code: number; message: string; \}; \}>' is not assignable/
}
const files = Object.keys(expected)

t.same(readdirSync(fixtures).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort(), [...files].sort(), 'every fixture has an expectation')

const committed = diagnostics(files, false)
const unmarked = diagnostics(files, true)
t.same([...committed].filter(([, messages]) => messages.length > 0), [], 'every fixture compiles as committed (what npm run check sees)')
for (const [file, pattern] of Object.entries(expected)) {
  t.test(file, async (t) => {
    const messages = unmarked.get(file) ?? []
    if (file.endsWith('valid.ts')) {
      t.same(messages, [], 'compiles')
      return
    }
    t.equal(readFileSync(fixtures + file, 'utf8').match(EXPECT_ERROR)?.length, 1, 'one mistake, marked')
    t.equal(messages.length, 1, 'exactly one error without the mark', { messages })
    t.match(messages.join('\n'), pattern)
  })
}
