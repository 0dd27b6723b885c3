import { readFileSync } from 'node:fs'

// tap's coverage map (`.taprc`): what each test file's processes are measured for. A test that
// imports no module of ours runs none of our code, only a library's: its coverage would be all
// of node_modules, which the report leaves out anyway, counted block by block. For the TypeScript
// compiler that costs a second or two of CPU (types.test.ts: 3.7 s → 6.2 s on Node 22). So those
// files run without coverage (null), every other with it, of everything the report takes ([]).
// A file named here that comes to import one of ours is measured again.
const LIBRARY_ONLY = ['test/openapi/types.test.ts', 'test/layers.test.ts']
const OURS = /^\s*import\b[^;]*?from\s+'\.\.?\//m

export default (testFile: string): null | [] =>
  LIBRARY_ONLY.includes(testFile) && !OURS.test(readFileSync(new URL(`../../${testFile}`, import.meta.url), 'utf8')) ? null : []
