import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

// The layout's one rule, read off the source's own imports: entry points → app → layers. The
// layers that every request passes through never reach into operations or the commands, and
// nothing imports the process (server.ts). Configuration runs the same way: each layer declares
// its own section with the loader (config/), which imports no layer; only the entry points and
// app.ts import the whole configuration (config.ts). A new file lands in a folder, and the rule
// holds for it.

const srcDir = fileURLToPath(new URL('../src/', import.meta.url))

const LAYERS = ['http', 'security', 'openapi', 'handlers', 'store']
const SPINE = ['server.ts', 'app.ts', 'config.ts', 'errors.ts']

/** Every .ts file under src/, relative to it. */
function sources (dir = srcDir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [relative(srcDir, path)] : []
  })
}

/** The files of src/ a file imports (statically or dynamically, types included), relative to src/. */
function importsOf (file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(srcDir, file), 'utf8'), true, true)
  return importedFiles.map(({ fileName }) => fileName).filter((name) => name.startsWith('.'))
    .map((name) => relative(srcDir, resolve(dirname(join(srcDir, file)), name)).replace(/\.js$/, '.ts'))
    .filter((name) => !name.startsWith('..'))
}

const folder = (file: string): string => file.includes('/') ? file.split('/')[0] : '.'
const files = sources()

t.test('the root of src/ holds only the spine', async (t) => {
  t.same(files.filter((file) => folder(file) === '.').sort(), [...SPINE].sort())
  t.same([...new Set(files.map(folder))].filter((f) => f !== '.').sort(), [...LAYERS, 'ops', 'cli', 'config'].sort(), 'one folder per concern')
})

t.test('imports run one way: entry points → app → layers', async (t) => {
  const wrong: string[] = []
  for (const file of files) {
    for (const target of importsOf(file)) {
      if (target === 'server.ts') wrong.push(`${file} imports server.ts, the process`)
      if (target === 'app.ts' && file !== 'server.ts') wrong.push(`${file} imports app.ts; only the process builds the service`)
      if (LAYERS.includes(folder(file)) && ['ops', 'cli'].includes(folder(target))) wrong.push(`${file} (a layer) imports ${target}`)
      if (folder(file) === 'ops' && folder(target) === 'cli') wrong.push(`${file} imports ${target}, a command`)
      if (folder(file) === 'config' && folder(target) !== 'config') wrong.push(`${file} (the configuration's loader) imports ${target}`)
      if (target === 'config.ts' && [...LAYERS, 'ops', 'config'].includes(folder(file))) wrong.push(`${file} imports the whole configuration; a layer reads its own section`)
    }
  }
  t.same(wrong, [], 'no import runs against the rule')
  t.ok(files.some((file) => importsOf(file).length > 0), 'the imports are read (the check can see one)')
})
