import module from 'node:module'

// Preloaded into every process of a test run (scripts/with-postgres.ts puts it first in
// NODE_OPTIONS, ahead of tap's own hook): tap's process-info hook reads each module it tracks
// again, splits it into lines and parses its source map, for `tap --changed` and for coverage.
// Here coverage is of src/ alone, and the modules of node_modules (some 860 in a test that builds
// the app) cost 0.3–0.4 s of CPU in every test process, a tenth of npm test's wall time. So its
// tracking skips node_modules, but for the tap package itself: the hook writes a process's record
// only if it began with the first module it tracked, which is tap's, before the test's own. Not
// tap's other packages (@tapjs/*): each has a source map, which the hook looks up again at every
// module it tracks after, 0.08 s of CPU a test process (npm test 1.5–2 s faster, coverage the
// same to the line). The variable is @tapjs/processinfo's (tap's runner sets it, to the pattern
// below less node_modules); were it to go, the tests run as before, slower.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = String(/(^(node|tapmock):|[\\/](\.tap|tap-snapshots)[\\/]|[\\/]node_modules[\\/](?!tap[\\/]))/)

// On Node 22 the hook runs on a hooks thread (`module.register`), and every module a test loads
// makes a round trip to it: 1.3 s more CPU in a test process that builds the app. Node 22 has
// in-thread hooks too (`module.registerHooks`), which processinfo uses from Node 24.13 on (it found
// earlier ones buggy); here its call to start that thread registers its in-thread hook instead.
// npm test on Node 22: 90.5 s → 71.4 s, coverage the same to the line. Were the files to move,
// the import below fails, loudly.
if (process.versions.node.startsWith('22.')) {
  const base = import.meta.resolve('@tapjs/processinfo/import')
  const loader = new URL('loader.mjs', base).href
  const { loadSync } = await import(new URL('hooks.mjs', base).href)
  const { register } = module
  module.register = ((specifier: string | URL, ...rest: any[]) => String(specifier) === loader ? module.registerHooks({ load: loadSync }) : register(specifier, ...rest)) as typeof register
}
