import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import semver from 'semver'
import { releasesIn, versionOf } from '../../scripts/api/history.ts'
import { addChangelogEntry, copyOfProject, gitIn, run, succeeds, type Step } from '../helpers/project-copy.ts'

// It runs npm's scripts many times in a copy of the project: ten seconds on an idle 2-core host,
// a minute on a busy one.
t.setTimeout(5 * 60_000)

// The README's release flow, walked on a copy of this project as a maintainer walks it: change
// openapi.yaml, set info.version, put what `npm run --silent api:changelog` prints at the top of
// docs/api-changelog.md, then `npm run check`'s contract gate (`npm run api:compat`), before
// committing and after: the verdict is the same. (The rest of `npm run check` after a change of the
// document: new-operation.system.test.ts.) The history holds drafts of 2.0.0 and 2.1.0
// (committed, one with an entry later removed), never released: none may be taken for a release.

const copy = copyOfProject(t.testdir())
const git = gitIn(copy)
const npm = async (...args: string[]): Promise<Step> => await run(copy, 'npm', ...args)
const documentPath = join(copy, 'openapi.yaml')
const start = git('rev-parse', 'HEAD').trim()
const released = versionOf(readFileSync(documentPath, 'utf8'), 'openapi.yaml')
const releases = releasesIn(readFileSync(join(copy, 'docs/api-changelog.md'), 'utf8'))
const major = semver.inc(released, 'major')!
const minor = semver.inc(released, 'minor')!

type Edit = (document: string) => string
const edit = (from: string, to: string): Edit => (document) => {
  if (!document.includes(from)) throw new Error(`openapi.yaml no longer holds ${JSON.stringify(from)}: update this test's edits`)
  return document.replace(from, to)
}
const ID = 'PlantId:\n      type: integer\n      format: int64\n      description: The plant\'s id, unique in the store. Any 64-bit signed integer.'
/** A request the release accepts is refused: ids beyond 32 bits. */
const breaking = edit(ID, ID.replace('int64', 'int32'))
/** A new optional request property. */
const addition = edit("            id:\n              $ref: '#/components/schemas/PlantId'\n", "            id:\n              $ref: '#/components/schemas/PlantId'\n            note:\n              type: string\n")
/** Only a description. */
const documentation = edit('Any 64-bit signed integer.', 'Any signed 64-bit integer.')

/** The copy as committed at the start, then the document changed and its version set. */
function change (version: string, ...edits: Edit[]): void {
  git('reset', '-q', '--hard', start)
  let document = readFileSync(documentPath, 'utf8')
  for (const apply of edits) document = apply(document)
  writeFileSync(documentPath, document.replace(/^ {2}version: .*$/m, `  version: ${version}`))
}

/** The README's release step: the changelog's entry for the document's version, on top. */
async function addEntry (t: Test, version: string): Promise<string> {
  const entry = await npm('run', '--silent', 'api:changelog')
  succeeds(t, 'npm run api:changelog', entry)
  t.match(entry.output, new RegExp(`^## Plant Store ${version.replaceAll('.', '\\.')}: changes since`), 'the entry names the version being made')
  addChangelogEntry(copy, entry.output)
  return entry.output
}

/** The contract gate (npm run api:compat, which npm run check runs) before committing and after: the same exit status and message. */
async function gateBeforeAndAfterCommit (t: Test): Promise<{ before: Step, after: Step }> {
  const before = await npm('run', 'api:compat')
  git('add', '-A')
  git('commit', '-q', '-m', 'release')
  const after = await npm('run', 'api:compat')
  const verdict = (step: Step) => /^openapi\.yaml \([^\n]*$|^info\.version[^\n]*$/m.exec(step.output)?.[0]
  t.equal(after.status, before.status, 'the same exit status, committed or not')
  t.ok(verdict(before), 'the gate gave a verdict')
  t.equal(verdict(after)?.replace(/commit \w+/, 'commit'), verdict(before)?.replace(/commit \w+/, 'commit'), 'and the same verdict')
  return { before, after }
}

/** The commits on main whose document is at `version` but whose changelog has no entry for it: drafts. */
function drafts (version: string): string[] {
  return git('log', '--first-parent', '--format=%h', start, '--', 'openapi.yaml').split('\n').filter(Boolean).filter((hash) =>
    versionOf(git('show', `${hash}:openapi.yaml`), hash) === version && !git('show', `${hash}:docs/api-changelog.md`).includes(`## Plant Store ${version}:`))
}

/** The gate names a release by the commit it was cut in: one whose document is at that version and whose changelog has its entry. */
function namesRelease (t: Test, output: string, version: string): void {
  const hash = new RegExp(`release ${version.replaceAll('.', '\\.')} \\(cut in commit (\\w+)`).exec(output)?.[1]
  t.ok(hash, `it names release ${version}: ${output}`)
  if (hash === undefined) return
  t.equal(versionOf(git('show', `${hash}:openapi.yaml`), hash), version, 'a commit whose document is at that version')
  t.match(git('show', `${hash}:docs/api-changelog.md`), `## Plant Store ${version}`, 'with its entry in the changelog')
}

t.test(`a breaking change with the next major version (${major}), over the drafts in the history`, async (t) => {
  t.comment(`drafts of ${major} in the history: ${drafts(major).join(', ') || 'none'}`)
  change(major, breaking)
  succeeds(t, 'npm run generate', await npm('run', '--silent', 'generate'))
  await addEntry(t, major)
  const { before, after } = await gateBeforeAndAfterCommit(t)
  succeeds(t, 'npm run api:compat, before committing', before)
  succeeds(t, 'npm run api:compat, committed', after)
  namesRelease(t, before.output, released)
  t.match(before.output, new RegExp(`openapi\\.yaml \\(${major.replaceAll('.', '\\.')}\\) may break clients of release ${released.replaceAll('.', '\\.')}`), 'a new major version, allowed to break')
  for (const draft of drafts(major)) t.notMatch(before.output + after.output, draft, `never the draft ${draft}`)

  // The next addition on the new major line is judged against it, over the drafts of that number too.
  const next = semver.inc(major, 'minor')!
  writeFileSync(documentPath, addition(readFileSync(documentPath, 'utf8')).replace(/^ {2}version: .*$/m, `  version: ${next}`))
  await addEntry(t, next)
  const added = await gateBeforeAndAfterCommit(t)
  succeeds(t, `the addition in ${next}`, added.before)
  namesRelease(t, added.before.output, major)
})

t.test(`an addition with the next minor version (${minor})`, async (t) => {
  change(released, addition)
  const unbumped = await npm('run', 'api:compat')
  t.equal(unbumped.status, 1, 'without the bump, it fails')
  t.match(unbumped.output, `make info.version ${minor} (a new minor version) and put what \`npm run --silent api:changelog\` prints at the top of docs/api-changelog.md`)
  change(minor, addition)
  await addEntry(t, minor)
  const { before } = await gateBeforeAndAfterCommit(t)
  succeeds(t, 'npm run api:compat', before)
  namesRelease(t, before.output, released)
})

t.test('a patch that changes only descriptions', async (t) => {
  const patch = semver.inc(released, 'patch')!
  change(patch, documentation)
  const entry = await addEntry(t, patch)
  t.match(entry, /### Breaking\n\nNone\.\n\n### Additions and other compatible changes\n\nNone\.\n\n### Documentation\n\n[^#]*PlantId › description/, 'the entry lists only documentation')
  const { before } = await gateBeforeAndAfterCommit(t)
  succeeds(t, 'npm run api:compat', before)
})

t.test('a breaking change without the bump fails, saying which version to make', async (t) => {
  change(released, breaking)
  const same = await gateBeforeAndAfterCommit(t)
  t.equal(same.before.status, 1, 'at the released version')
  t.match(same.before.output, `${released} is released: undo these changes, or make info.version ${major} (a new major version) and put what \`npm run --silent api:changelog\` prints at the top of docs/api-changelog.md`)
  namesRelease(t, same.after.output, released)

  change(minor, breaking)
  await addEntry(t, minor)
  const bumped = await gateBeforeAndAfterCommit(t)
  t.equal(bumped.before.status, 1, 'with a new minor version')
  t.match(bumped.before.output, `${minor} is not a new major version over ${released}: undo these changes, or make info.version ${major}`)
  t.match(bumped.before.output, /request-property-type-changed/, 'naming the change')
})

t.test('a version that goes down fails', async (t) => {
  // A patch of the release before, as if fixing the older line.
  const lower = semver.inc(releases[1], 'patch')!
  t.ok(semver.lt(lower, released), `${lower} is below ${released}`)
  change(lower, documentation)
  await addEntry(t, lower)
  const { before } = await gateBeforeAndAfterCommit(t)
  t.equal(before.status, 1)
  t.match(before.output, `info.version went down, from ${released} (released) to ${lower}: a version only goes up. Make it ${semver.inc(released, 'patch')} for documentation, ${minor} for an addition, ${major} for a breaking change`)
})
