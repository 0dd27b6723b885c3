import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { httpTransport } from '../../src/openapi/verify/http.ts'
import { junitOf } from '../../src/openapi/verify/junit.ts'
import { reportOf, summaryOf } from '../../src/openapi/verify/report.ts'
import { describeInference, inferResources } from '../../src/openapi/routes/resources.ts'
import { keptThrough, unwritten } from '../../src/openapi/verify/sequences.ts'
import { verify } from '../../src/openapi/verify/verifier.ts'
import { answer, serveText } from '../helpers/hand-served.ts'
import { injectTransport } from '../helpers/inject-transport.ts'
import { pets } from './fixtures/pets.ts'
import { GADGET_FAULTS, SEQUENCE_FAULTS, startThings, THINGS, type GadgetFault, type SequenceFault, type ThingsFault } from '../helpers/things-service.ts'

// The verifier's sequences (openapi/verify/sequences.ts) against a service written by hand whose
// document declares no links (test/helpers/things-service.ts), over real HTTP: kept to its word,
// nothing found, books made on a shelf made first (and reviews and loans of one, named in their
// bodies); broken between requests in one way, the check for that way names it, shrunk to its
// shortest sequence, each step with its curl.

async function verified (t: Test, fault?: ThingsFault) {
  const { url } = await startThings(t, fault)
  const http = httpTransport(url, { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  const verification = await verify(structuredClone(THINGS), http.send, { seed: 7 })
  return { verification, report: reportOf(verification, 'things.yaml', url) }
}

// The service kept to its word, verified once for the tests that read that run (its service ends
// with the first of them; what they read is the run's record).
let faithful: ReturnType<typeof verified> | undefined
const verifiedFaithful = (t: Test) => (faithful ??= verified(t))

/** `document` verified (seed 7, unless given) against a service of `handle` written by hand in the test, over real HTTP: the verification, and the service's URL. */
async function verifiedAgainst (t: Test, document: object, handle: Parameters<typeof serveText>[1], seed = 7) {
  const url = await serveText(t, handle, document)
  const http = httpTransport(url, { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  return { verification: await verify(structuredClone(document) as any, http.send, { seed }), url }
}

/** `document` verified (seed 7, unless given) against the project's own stateful mock of it, in-process: what the mock inferred, the verification, and its violations, a line each. */
async function verifiedMock (t: Test, document: object, seed = 7) {
  const { app, document: mocked, routes } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(document) as any }, 'document.json')
  t.teardown(() => app.close())
  const verification = await verify(mocked, injectTransport(app), { seed })
  const found = verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`))
  return { app, inferred: describeInference(inferResources(mocked, routes)), verification, found }
}

/** A JSON media type of `schema`, as a request body or an answer holds it. */
const json = (schema: object) => ({ content: { 'application/json': { schema } } })

t.test('a service that keeps its word between requests: every chain followed, nothing found', async (t) => {
  const { verification, report } = await verifiedFaithful(t)
  t.same(report.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`)), [], 'no violation')
  t.equal(verification.chains.resources, 5, 'things, shelves, books, reviews and gadgets followed')
  t.ok(verification.chains.requests >= 9 + 2 + 4, `${verification.chains.requests} requests in chains`)
  t.same(report.operations.flatMap((o) => o.notes.filter((note) => note.startsWith('sequence'))), [], 'each chain to its end: the book on a shelf made first, and the review of a shelf made first (its body names it)')
})

t.test('a request whose path names what a create makes: each sent with that made first, so none refused for naming what is not there', async (t) => {
  const { verification, report } = await verifiedFaithful(t)
  t.same(report.operations.find((o) => o.operationId === 'labelShelf')!.violations, [], 'no positive_data_acceptance for the label')
  const valid = verification.operations.find((o) => o.operationId === 'labelShelf')!.sent.filter((s) => s.kind === 'valid')
  t.ok(valid.length >= 4, `${valid.length} valid requests: the sample, the example, values drawn`)
  t.same(valid.filter((s) => s.status !== 201).map((s) => `${s.request.path} ${s.status}`), [], 'each on a shelf that is there (the service refuses one on a shelf that is not, 422), not the document\'s example 987654')
})

t.test('a request whose body names what does not exist: refused alone, accepted with it made first and its key in the body', async (t) => {
  const { report } = await verifiedFaithful(t)
  const loans = report.operations.find((o) => o.operationId === 'lendFromShelf')!
  t.same(loans.violations, [], 'no positive_data_acceptance for the loan')
  t.match(loans.notes.join('\n'), /valid request\(s\) refused \(422\) named what did not exist: with it made first \(POST \/shelves\), the request was answered 201/, 'a note says why its refusals were not the service\'s fault')
})

t.test('a request whose body names a shelf, refused even with the shelf made first: positive_data_acceptance, shown by that sequence', async (t) => {
  const { report } = await verified(t, 'a loan refused from a shelf that is there')
  const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
  t.same(found.map((v) => `${v.operation} ${v.check}`), ['POST /loans positive_data_acceptance'], 'once, and nothing else')
  t.same(found[0]?.steps?.map((s) => `${s.step}: ${s.request} → ${s.status}`), ['create: POST /shelves → 201', 'request: POST /loans → 422'], 'the shelf made, then the loan from it refused')
  t.match(found[0]?.steps?.[1].curl, /"shelfId":\d{1,3}[,}]/, 'the loan names the shelf just made, not its example (987654)')
})

t.test('a request refused even with what it names made first: positive_data_acceptance, shown by that sequence', async (t) => {
  const { report } = await verified(t, 'a label refused on a shelf that is there')
  const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
  t.same(found.map((v) => `${v.operation} ${v.check}`), ['POST /shelves/{shelfId}/labels positive_data_acceptance'], 'once, and nothing else')
  t.match(found[0]?.steps?.map((s) => `${s.step}: ${s.request} → ${s.status}`), ['create: POST /shelves → 201', /^request: POST \/shelves\/\d+\/labels → 422$/], 'the shelf made, then the label on it refused')
  t.match(found[0]?.detail, /a valid request \(\w+\) refused with 422 \(the answer says what it names does not exist/, 'the service says so, though the shelf is there')
})

t.test('a book without its title taken, on a shelf whose id no sample names: found, as every request of the operation names a shelf made first', async (t) => {
  const { report } = await verified(t, 'a book without its title taken')
  const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
  const missing = found.filter((v) => v.check === 'negative_data_rejection' && /body without a required property/.test(v.detail))
  t.same(missing.map((v) => `${v.operation} ${v.detail}`), ['POST /shelves/{shelfId}/books an invalid request (body without a required property) accepted with 201'], `once: ${JSON.stringify(found.map((v) => v.detail))}`)
  t.match(missing[0]?.steps?.map((s) => `${s.step}: ${s.request} → ${s.status}`), ['create: POST /shelves → 201', /^request: POST \/shelves\/1000\d{3}\/books → 201$/], 'the shelf made, then the book on it')
})

t.test('a PUT that merges what it is sent into what was there, or drops what it was sent: read_after_write, shrunk; one that replaces: nothing', async (t) => {
  const fields = { title: { type: 'string', minLength: 1 }, body: { type: 'string' } }
  const note = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer', readOnly: true }, ...fields } }
  const NOTES = {
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes': { post: { operationId: 'addNote', requestBody: { required: true, ...json({ type: 'object', required: ['title'], properties: fields }) }, responses: { 201: { description: 'added', ...json(note) }, 400: { description: 'bad' } } } },
      '/notes/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        get: { operationId: 'getNote', responses: { 200: { description: 'the note', ...json(note) }, 404: { description: 'none' } } },
        put: { operationId: 'replaceNote', requestBody: { required: true, ...json({ type: 'object', required: ['title'], properties: fields }) }, responses: { 200: { description: 'replaced', ...json(note) }, 400: { description: 'bad' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const kind of ['replaces', 'merges', 'drops the body'] as const) {
    const merges = kind === 'merges'
    const notes = new Map<string, Record<string, unknown>>()
    let next = 1
    const { verification } = await verifiedAgainst(t, NOTES, (req, res, text) => {
      if (text !== '' && req.headers['content-type'] !== 'application/json') return answer(res, 415)
      const body = text === '' ? undefined : JSON.parse(text)
      const id = /^\/notes\/(\d+)$/.exec(req.url!)?.[1]
      if (req.method === 'POST' && req.url === '/notes') {
        if (typeof body?.title !== 'string' || body.title === '') return answer(res, 400)
        const made = { id: next++, title: body.title, ...(typeof body.body === 'string' && { body: body.body }) }
        notes.set(String(made.id), made)
        return answer(res, 201, made)
      }
      const there = id === undefined ? undefined : notes.get(id)
      if (there === undefined) return answer(res, 404)
      if (req.method === 'GET') return answer(res, 200, there)
      if (typeof body?.title !== 'string' || body.title === '') return answer(res, 400)
      const replaced = { ...(merges ? there : {}), id: there.id, title: body.title, ...(typeof body.body === 'string' && kind !== 'drops the body' && { body: body.body }) }
      notes.set(id!, replaced)
      answer(res, 200, replaced)
    })
    const found = verification.operations.flatMap((o) => o.violations)
    if (kind === 'replaces') {
      t.same(found.map((v) => v.detail), [], 'a PUT that replaces: nothing found')
      continue
    }
    if (kind === 'drops the body') {
      t.same(found.map((v) => v.check), ['read_after_write'], 'a PUT that drops what it need not keep: found, once, by a replace of all')
      t.match(found[0]?.detail, /^PUT \/notes\/\{id\} wrote what the read does not answer: body: written "/)
      t.same(found[0]?.steps?.map((s) => s.step), ['create', 'replace all', 'read'], 'shrunk to create, replace all, read')
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], 'a PUT that merges: found, once')
    t.match(found[0]?.detail, /^PUT \/notes\/\{id\} replaced it without what the read still answers as before, as if merged: body: left out, read "/)
    t.same(found[0]?.steps?.map((s) => s.step), ['create', 'replace', 'read'], 'shrunk to create, replace, read')
  }
})

t.test('Stripe\'s style: an update POSTed to the item path in a form, a read that answers the customer or what it was (anyOf), a list in deepObject (expand[]); an update that loses one property, or reads false as true: found by a patch of all that change; an optional number taken as any text: found; one that keeps its word: nothing', async (t) => {
  const form = { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { email: { type: 'string', maxLength: 40 }, age: { type: 'integer', minimum: 0, maximum: 150 }, vip: { type: 'boolean' } } } } } }
  const schema = { type: 'object', required: ['id', 'email', 'age', 'vip'], properties: { id: { type: 'string' }, email: { type: 'string' }, age: { type: 'integer' }, vip: { type: 'boolean' } } }
  const customer = { description: 'it', ...json(schema) }
  const gone = { type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string' }, deleted: { type: 'boolean', enum: [true] } } }
  const expand = { name: 'expand', in: 'query', style: 'deepObject', explode: true, schema: { type: 'array', items: { type: 'string', enum: ['sources', 'tax'] } } }
  const CUSTOMERS = {
    openapi: '3.0.3',
    info: { title: 'Customers', version: '1.0.0' },
    paths: {
      '/customers': { post: { requestBody: form, responses: { 200: customer, 400: { description: 'bad' } } } },
      '/customers/{customer}': {
        parameters: [{ name: 'customer', in: 'path', required: true, schema: { type: 'string' } }],
        get: { parameters: [expand], responses: { 200: { description: 'it, or what it was', ...json({ anyOf: [schema, gone] }) }, 404: { description: 'none' } } },
        post: { requestBody: form, responses: { 200: customer, 400: { description: 'bad' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const fault of ['none', 'loses the age', 'reads false as true', 'takes any age'] as const) {
    const customers = new Map<string, { id: string, email: string, age: number, vip: boolean }>()
    const { verification } = await verifiedAgainst(t, CUSTOMERS, (req, res, text) => {
      const url = new URL(req.url!, 'http://localhost')
      if ([...url.searchParams.keys()].some((name) => !/^expand\[\d*\]$/.test(name) || !['sources', 'tax'].includes(url.searchParams.get(name)!))) return answer(res, 400)
      if (text !== '' && req.headers['content-type'] !== 'application/x-www-form-urlencoded') return answer(res, 415)
      const fields = new URLSearchParams(text)
      const email = fields.get('email') ?? undefined
      const age = fields.has('age') ? (fault === 'takes any age' ? Number(fields.get('age')) || 0 : Number(fields.get('age'))) : undefined
      const vip = fields.has('vip') ? (fault === 'reads false as true' ? fields.get('vip') !== '' : fields.get('vip') === 'true') : undefined
      if ([...fields.keys()].some((name) => !['email', 'age', 'vip'].includes(name)) || (email !== undefined && email.length > 40) || (age !== undefined && !(Number.isInteger(age) && age >= 0 && age <= 150)) || !['true', 'false', null].includes(fields.get('vip'))) return answer(res, 400)
      if (url.pathname === '/customers') {
        const made = { id: `cus_${customers.size + 1}`, email: email ?? '', age: age ?? 0, vip: vip ?? false }
        customers.set(made.id, made)
        return answer(res, 200, made)
      }
      const there = customers.get(decodeURIComponent(url.pathname.split('/')[2]))
      if (there === undefined) return answer(res, 404)
      if (req.method === 'POST') Object.assign(there, email !== undefined && { email }, age !== undefined && fault !== 'loses the age' && { age }, vip !== undefined && { vip })
      answer(res, 200, there)
    })
    t.same(verification.operations.flatMap((o) => o.notes), [], 'every request made, every chain to its end')
    const found = verification.operations.flatMap((o) => o.violations)
    if (fault === 'none') {
      t.same(found.map((v) => v.detail), [], 'an update that keeps what it is sent: nothing found')
      continue
    }
    if (fault === 'takes any age') {
      t.same(found.map((v) => `${v.check}: ${v.detail}`), ['negative_data_rejection: an invalid request (body property of the wrong type) accepted with 200'], 'an age that is no number, taken: found, though the form makes it optional')
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], `one that ${fault}: found, once`)
    t.match(found[0]?.detail, fault === 'loses the age' ? /^POST \/customers\/\{customer\} wrote what the read does not answer: age: written \d+, read 0$/ : /^POST \/customers\/\{customer\} wrote what the read does not answer: vip: written false, read true$/)
    t.same(found[0]?.steps?.map((s) => s.step), ['create', 'patch all', 'read'], 'shrunk to create, patch all, read')
  }

  const mocked = await verifiedMock(t, CUSTOMERS)
  t.same([...mocked.verification.operations.flatMap((o) => o.notes), ...mocked.found], [], 'the project\'s stateful mock of the same document, which answers the customer it keeps: nothing found, each chain to its end')
})

t.test('Stripe\'s forms, every field deepObject whatever its shape: a URL (text, or "" to unset it) and a fee (a number, or "") sent as its clients send them, name=value; a service that drops either: found; one that keeps them, and the project\'s mock: nothing', async (t) => {
  const deep = { style: 'deepObject', explode: true }
  const form = { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { return_url: { anyOf: [{ type: 'string', maxLength: 40 }, { type: 'string', enum: [''] }] }, fee: { anyOf: [{ type: 'integer', minimum: 0, maximum: 1000 }, { type: 'string', enum: [''] }] } } }, encoding: { return_url: deep, fee: deep } } } }
  const schema = { type: 'object', required: ['id', 'return_url', 'fee'], properties: { id: { type: 'string' }, return_url: { type: 'string', nullable: true }, fee: { type: 'integer', nullable: true } } }
  const CONFIGURATIONS = {
    openapi: '3.0.3',
    info: { title: 'Portal', version: '1.0.0' },
    paths: {
      '/configurations': { post: { requestBody: form, responses: { 200: { description: 'made', ...json(schema) }, 400: { description: 'bad' } } } },
      '/configurations/{configuration}': {
        get: { parameters: [{ name: 'configuration', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...json(schema) }, 404: { description: 'none' } } }
      }
    }
  }
  for (const fault of ['none', 'drops the URL', 'drops the fee'] as const) {
    const made = new Map<string, { id: string, return_url: string | null, fee: number | null }>()
    const { verification } = await verifiedAgainst(t, CONFIGURATIONS, (req, res, text) => {
      if (req.method === 'GET') return made.has(req.url!.split('/')[2]) ? answer(res, 200, made.get(req.url!.split('/')[2])) : answer(res, 404)
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return answer(res, 415)
      const fields = new URLSearchParams(text)
      const url = fields.get('return_url')
      const fee = fields.get('fee')
      if ([...fields.keys()].some((name) => !['return_url', 'fee'].includes(name)) || (url !== null && url.length > 40) || (fee !== null && fee !== '' && !(/^\d+$/.test(fee) && Number(fee) <= 1000))) return answer(res, 400)
      const configuration = { id: `bpc_${made.size + 1}`, return_url: url === '' || fault === 'drops the URL' ? null : url, fee: fee === null || fee === '' || fault === 'drops the fee' ? null : Number(fee) }
      made.set(configuration.id, configuration)
      answer(res, 200, configuration)
    })
    const found = verification.operations.flatMap((o) => o.violations)
    if (fault === 'none') {
      t.same(found.map((v) => v.detail), [], 'a service that keeps both: nothing found')
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], `one that ${fault}: found, once`)
    t.match(found[0]?.detail, fault === 'drops the URL' ? /^POST \/configurations wrote what the read does not answer: return_url: written "[^"]+", read null$/ : /^POST \/configurations wrote what the read does not answer: fee: written \d+, read null$/)
  }
  const mocked = await verifiedMock(t, CONFIGURATIONS)
  t.same(mocked.found, [], 'the project\'s stateful mock of the same document, which keeps both: nothing found')
})

t.test('what was written is compared as it was sent: a -0 drawn goes out as 0, and a 0 read back holds it; an object without a prototype, as JSON reads it', async (t) => {
  const doc = { openapi: '3.1.0', info: { title: 'Pay', version: '1.0.0' }, paths: {} } as any
  const schema = { type: 'object', properties: { salary: { type: 'number' }, bonus: { type: 'number' } } }
  const validators = createValidators(doc)
  t.same(unwritten(doc, validators, schema, 'id', { salary: -0, bonus: 1 }, JSON.parse(JSON.stringify({ salary: -0, bonus: 1 }))), [], 'read back as sent')
  t.same(unwritten(doc, validators, schema, 'id', { salary: -0, bonus: 1 }, { salary: 0, bonus: 2 }), ['bonus: written 1, read 2'], 'what differs, still found')
  // As Azure's firewall rules, items of a schema with no type, sampled past the sampler's depth: an item left undefined goes out as null.
  const overrides = { type: 'object', properties: { rules: { type: 'array', items: { properties: { ruleId: { type: 'string' } }, required: ['ruleId'] } } } }
  t.same(unwritten(doc, validators, overrides, 'id', { rules: [undefined] }, JSON.parse('{"rules":[null]}')), [], 'an undefined item read back as the null JSON sent')
  t.same(unwritten(doc, validators, overrides, 'id', { rules: [undefined] }, { rules: [{ ruleId: 'r' }] }), ['rules: written [null], read [{"ruleId":"r"}]'], 'and read back as anything else: found')
  // A form read back by the engine's parsers holds objects without a prototype; JSON reads every one back with one.
  const address = Object.assign(Object.create(null), { city: 'Lyon' })
  const withAddress = { type: 'object', properties: { address: { type: 'object', properties: { city: { type: 'string' } } } } }
  t.same(keptThrough(doc, withAddress, ['id'], { address }, JSON.parse('{"address":{"city":"Lyon"}}')), ['address: left out, read {"city":"Lyon"}'], 'an object left out by a replace and read back as it was: kept, whatever its prototype')
  // As Google Storage's HMAC keys, under /projects/{projectId}/hmacKeys/{accessId}: the read answers the project its path names.
  const key = { type: 'object', properties: { projectId: { type: 'string' }, state: { type: 'string' } } }
  t.same(keptThrough(doc, key, ['accessId', 'projectId'], { projectId: 'p1', state: 'ACTIVE' }, { projectId: 'p1', state: 'ACTIVE' }), ['state: left out, read "ACTIVE"'], 'a parent the path names, read back: the path\'s, not kept')
})

t.test('what the read answers of a nested object is held to what its schema names, as at the item\'s own level (bunq\'s counterparty, whose `service` is writeOnly): a member never read, the server\'s own, or one it does not name, not compared; a member it names and lost: found; one the read\'s schema refuses in the item (Azure\'s groups), not compared either; the project\'s mock, nothing found', async (t) => {
  const doc = { openapi: '3.1.0', info: { title: 'Payments', version: '1.0.0' }, paths: {} } as any
  const validators = createValidators(doc)
  const pointer = { type: 'object', properties: { type: { type: 'string' }, value: { type: 'string' }, service: { type: 'string', writeOnly: true }, checkedAt: { type: 'string', readOnly: true } } }
  const payment = { type: 'object', properties: { id: { type: 'integer', readOnly: true }, counterparty: pointer, labels: { type: 'object', additionalProperties: { type: 'string' } }, meta: { type: 'object' } } }
  const sent = { counterparty: { type: 'IBAN', value: 'NL01', service: 'iDEAL', checkedAt: 'now', note: 'hi' }, labels: { a: 'x' }, meta: { any: 1 } }
  t.same(unwritten(doc, validators, payment, 'id', sent, { id: 1, counterparty: { type: 'IBAN', value: 'NL01', checkedAt: 'then' }, labels: { a: 'x' }, meta: { any: 1 } }), [], 'the writeOnly, readOnly and unnamed members read otherwise or not at all: held')
  t.same(unwritten(doc, validators, payment, 'id', sent, { id: 1, counterparty: { type: 'IBAN' }, labels: {}, meta: {} }).map((line) => line.split(':')[0]), ['counterparty', 'labels', 'meta'], 'a named member lost, a map\'s entry lost, a free-form object\'s member lost: found')
  // As Azure's AD groups: an allOf part whose additionalProperties takes objects alone, so that no displayName of text is valid in the read.
  const group = { allOf: [{ type: 'object', additionalProperties: { type: 'object' }, properties: { objectId: { type: 'string', readOnly: true } } }], properties: { displayName: { type: 'string' }, mailEnabled: { type: 'boolean' } } }
  t.same(unwritten(doc, validators, group, 'objectId', { displayName: 'Ops', mailEnabled: false }, { objectId: '1' }), [], 'a value the read\'s schema refuses in the item, left out of a valid read: no promise broken')
  t.same(unwritten(doc, validators, group, 'objectId', { displayName: 'Ops', mailEnabled: false }, { objectId: '1', displayName: 'Ops' }), ['mailEnabled: written false, read undefined'], 'one read invalid already (its displayName): what it lost, found as before')
  // As Visma's customer contract: its create writes details as a list, its read answers an object of a schema that names properties and no type.
  const contract = { type: 'object', properties: { id: { type: 'string', readOnly: true }, details: { properties: { currentSetup: { type: 'number' } } } } }
  t.same(unwritten(doc, validators, contract, 'id', { details: [{ extraUsagePrice: 1 }] }, { id: '1', details: { currentSetup: 0.1 } }), [], 'a list written where the read\'s schema names properties and no type, an object meant: no promise broken')
  t.same(unwritten(doc, validators, contract, 'id', { details: { currentSetup: 2 } }, { id: '1', details: { currentSetup: 0.1 } }), ['details: written {"currentSetup":2}, read {"currentSetup":0.1}'], 'an object written there and read otherwise: found')

  const document = {
    openapi: '3.1.0',
    info: { title: 'Payments', version: '1.0.0' },
    paths: {
      '/payments': { post: { requestBody: { required: true, ...json(payment) }, responses: { 201: { description: 'made', ...json(payment) } } } },
      '/payments/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'it', ...json(payment) }, 404: { description: 'none' } } }
      }
    }
  }
  const mocked = await verifiedMock(t, document)
  t.same(mocked.found, [])
  t.ok(mocked.verification.chains.requests > 0, 'its chain followed')
})

t.test('a read of several shapes (Ably\'s rules, a oneOf its ruleType chooses): an item patched to another type is read as that type\'s, and held to what that type names; the project\'s mock, nothing found', async (t) => {
  const rule = (type: string, target: object) => ({ type: 'object', additionalProperties: false, required: ['ruleType', 'target'], properties: { id: { type: 'string', readOnly: true }, ruleType: { type: 'string', enum: [type] }, status: { type: 'string' }, target: { type: 'object', additionalProperties: false, ...target } } })
  const schemas = {
    http: rule('http', { required: ['url', 'format'], properties: { url: { type: 'string' }, format: { type: 'string' }, enveloped: { type: 'boolean' } } }),
    zapier: rule('http/zapier', { required: ['url'], properties: { url: { type: 'string' } } }),
    kafka: rule('kafka', { required: ['brokers', 'routingKey'], properties: { brokers: { type: 'array', items: { type: 'string' }, minItems: 1 }, routingKey: { type: 'string' } } })
  }
  // Made as an http rule, patched to another type: a patch's branches require nothing but the
  // type that chooses them (the discriminator), so each patch sends one.
  const patches = { zapier_patch: { ...schemas.zapier, required: [] }, kafka_patch: { ...schemas.kafka, required: [] } }
  const oneOf = (names: string[]) => ({ oneOf: names.map((name) => ({ $ref: `#/components/schemas/${name}` })), discriminator: { propertyName: 'ruleType', mapping: Object.fromEntries(names.map((name) => [(schemas as any)[name.replace('_patch', '')].properties.ruleType.enum[0], `#/components/schemas/${name}`])) } })
  const read = oneOf(['http', 'zapier', 'kafka'])
  const document = {
    openapi: '3.0.3',
    info: { title: 'Rules', version: '1.0.0' },
    components: { schemas: { ...schemas, ...patches } },
    paths: {
      '/rules': { post: { requestBody: { required: true, ...json({ $ref: '#/components/schemas/http' }) }, responses: { 201: { description: 'made', ...json(read) } } } },
      '/rules/{rule_id}': {
        parameters: [{ name: 'rule_id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { 200: { description: 'it', ...json(read) }, 404: { description: 'none' } } },
        patch: { requestBody: { required: true, ...json(oneOf(['zapier_patch', 'kafka_patch'])) }, responses: { 200: { description: 'changed', ...json(read) }, 404: { description: 'none' } } }
      }
    }
  }
  const mocked = await verifiedMock(t, document)
  t.same(mocked.found, [])
  t.ok(mocked.verification.chains.requests > 0, 'its chain followed')
})

t.test('a change sent in a type that is no JSON nor form (an object schema in text/plain, as AppCenter\'s release update) writes no properties the read is held to: the project\'s mock, nothing found', async (t) => {
  const release = { type: 'object', properties: { id: { type: 'integer', readOnly: true }, notes: { type: 'string' } } }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Releases', version: '1.0.0' },
    paths: {
      '/releases': { post: { requestBody: { required: true, ...json(release) }, responses: { 201: { description: 'made', ...json(release) } } } },
      '/releases/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'it', ...json(release) }, 404: { description: 'none' } } },
        patch: { requestBody: { required: true, content: { 'text/plain': { schema: release } } }, responses: { 200: { description: 'changed', ...json(release) } } }
      }
    }
  }
  const mocked = await verifiedMock(t, document)
  t.same(mocked.found, [])
  t.ok(mocked.verification.chains.requests > 0, 'its chain followed')
})

t.test('a replace that must name the item as last seen (If-Match): sent with the ETag its chain was last answered; one that loses the write: found', async (t) => {
  const etagged = (description: string) => ({ description, headers: { ETag: { required: true, schema: { type: 'string' } } }, ...json({ type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' } } }) })
  const body = { required: true, ...json({ type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 } } }) }
  const NOTES = {
    openapi: '3.0.3',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes': { post: { requestBody: body, responses: { 201: etagged('added'), 400: { description: 'bad' } } } },
      '/notes/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: etagged('the note'), 404: { description: 'none' } } },
        put: { parameters: [{ name: 'If-Match', in: 'header', required: true, schema: { type: 'string' } }], requestBody: body, responses: { 200: etagged('replaced'), 400: { description: 'bad' }, 404: { description: 'none' }, 412: { description: 'changed since' } } }
      }
    }
  }
  for (const loses of [false, true]) {
    const notes = new Map<string, { id: number, title: string, version: number }>()
    let next = 1
    const tagOf = (note: { id: number, version: number }) => `"${note.id}.${note.version}"`
    const { verification, url } = await verifiedAgainst(t, NOTES, (req, res, text) => {
      if (text !== '' && req.headers['content-type'] !== 'application/json') return answer(res, 415)
      const sent = text === '' ? undefined : JSON.parse(text)
      const shown = (status: number, note: { id: number, title: string, version: number }) => answer(res, status, { id: note.id, title: note.title }, { etag: tagOf(note) })
      if (req.method === 'POST') {
        if (typeof sent?.title !== 'string' || sent.title === '') return answer(res, 400)
        const made = { id: next++, title: sent.title, version: 1 }
        notes.set(String(made.id), made)
        return shown(201, made)
      }
      const there = notes.get(/^\/notes\/(\d+)$/.exec(req.url!)?.[1] ?? '')
      if (there === undefined) return answer(res, 404)
      if (req.method === 'GET') return shown(200, there)
      if (typeof sent?.title !== 'string' || sent.title === '') return answer(res, 400)
      if (req.headers['if-match'] !== tagOf(there)) return answer(res, 412)
      const replaced = { ...there, title: loses ? there.title : sent.title, version: there.version + 1 }
      notes.set(String(there.id), replaced)
      shown(200, replaced)
    })
    const report = reportOf(verification, 'notes.json', url)
    const found = report.operations.flatMap((o) => o.violations)
    if (!loses) {
      t.same(found.map((v) => v.detail), [], 'a service that keeps its word: nothing found')
      t.same(report.operations.flatMap((o) => o.notes.filter((note) => note.startsWith('sequence'))), [], 'its chain followed to its end, past the replace')
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], 'a replace that loses the write: found, once')
    t.same(found[0]?.steps?.map((s) => `${s.step} ${s.status}`), ['create 201', 'replace 200', 'read 200'], 'shrunk to create, replace, read')
    t.match(found[0]?.steps?.[1]?.curl, /\/notes\/(\d+)' -H 'if-match: "\1\.1"'/, 'the replace names the ETag the create answered')
  }
})

t.test('a key the client gives in the create, refused once taken (409): each create sends one not sent before, and the chain goes on; a delete that keeps the item, or a PUT that merges, found', async (t) => {
  const kind = { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['paper', 'ebook'] }, weight: { type: 'number' } } }
  const book = { type: 'object', required: ['isbn', 'title'], properties: { isbn: { type: 'string', pattern: '^[0-9]{13}$' }, title: { type: 'string', minLength: 1 }, kind } }
  const BOOKS = {
    openapi: '3.1.0',
    info: { title: 'Books', version: '1.0.0' },
    paths: {
      '/books': { post: { requestBody: { required: true, ...json(book) }, responses: { 201: { description: 'added', ...json(book) }, 400: { description: 'bad' }, 409: { description: 'that isbn is taken' } } } },
      '/books/{isbn}': {
        parameters: [{ name: 'isbn', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]{13}$' } }],
        get: { responses: { 200: { description: 'the book', ...json(book) }, 404: { description: 'none' } } },
        put: { requestBody: { required: true, ...json(book) }, responses: { 200: { description: 'replaced', ...json(book) }, 400: { description: 'bad' }, 404: { description: 'none' } } },
        delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const fault of [undefined, 'a delete that keeps it', 'a PUT that merges'] as const) {
    const books = new Map<string, Record<string, unknown>>()
    let refused = 0
    const { verification, url } = await verifiedAgainst(t, BOOKS, (req, res, text) => {
      if (text !== '' && req.headers['content-type'] !== 'application/json') return answer(res, 415)
      const sent = text === '' ? undefined : JSON.parse(text)
      const valid = /^\d{13}$/.test(sent?.isbn) && typeof sent.title === 'string' && sent.title !== '' &&
        (sent.kind === undefined || (['paper', 'ebook'].includes(sent.kind?.type) && ['undefined', 'number'].includes(typeof sent.kind.weight)))
      if (req.method === 'POST') {
        if (!valid) return answer(res, 400)
        if (books.has(sent.isbn) && ++refused) return answer(res, 409)
        books.set(sent.isbn, sent)
        return answer(res, 201, sent)
      }
      const isbn = /^\/books\/(\d{13})$/.exec(req.url!)?.[1] ?? ''
      const there = books.get(isbn)
      if (there === undefined) return answer(res, 404)
      if (req.method === 'GET') return answer(res, 200, there)
      if (req.method === 'DELETE') {
        if (fault !== 'a delete that keeps it') books.delete(isbn)
        return answer(res, 204)
      }
      if (!valid) return answer(res, 400)
      const replaced = { ...(fault === 'a PUT that merges' ? there : {}), ...sent, isbn }
      books.set(isbn, replaced)
      answer(res, 200, replaced)
    })
    const report = reportOf(verification, 'books.json', url)
    const found = report.operations.flatMap((o) => o.violations)
    if (fault === undefined) {
      t.same(found.map((v) => v.detail), [], 'a service that keeps its word: nothing found')
      t.ok(refused > 0, 'creates refused as taken: the samples\' isbn, sent by the requests before the chains')
      t.same(report.operations.flatMap((o) => o.notes), [], 'its chain followed to its end all the same')
      continue
    }
    const check = fault === 'a delete that keeps it' ? 'use_after_free' : 'read_after_write'
    t.same(found.map((v) => v.check), [check], `${fault}: found by ${check}`)
    t.ok(found[0]?.steps?.every((s) => s.status !== 409), 'no create of its sequence refused as taken')
    if (fault === 'a PUT that merges') t.match(found[0]?.detail, /as if merged: kind: left out/, 'an object left out, read back as it was written: alike, whatever fast-check drew it as')
  }
})

// Tasks patched with JSON Patch (RFC 6902): a list of operations, not the members of a task, in
// its own media type or, as LaunchDarkly's and 1Password Connect's descriptions have it, in JSON.
const JSON_PATCH_TYPES = ['application/json-patch+json', 'application/json'] as const
type JsonPatchType = typeof JSON_PATCH_TYPES[number]
const task = { type: 'object', required: ['title'], properties: { id: { type: 'integer', readOnly: true }, title: { type: 'string', minLength: 1 }, done: { type: 'boolean' } } }
const tasksDocument = (patchType: JsonPatchType) => ({
  openapi: '3.1.0',
  info: { title: 'Tasks', version: '1.0.0' },
  paths: {
    '/tasks': { post: { requestBody: { required: true, ...json(task) }, responses: { 201: { description: 'made', ...json(task) }, 400: { description: 'bad' } } } },
    '/tasks/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      get: { responses: { 200: { description: 'the task', ...json(task) }, 404: { description: 'none' } } },
      patch: {
        requestBody: { required: true, content: { [patchType]: { schema: { type: 'array', minItems: 1, items: { type: 'object', required: ['op', 'path'], properties: { op: { enum: ['add', 'remove', 'replace', 'test'] }, path: { type: 'string', pattern: '^/(title|done)$' }, value: {} } } } } } },
        responses: { 200: { description: 'patched', ...json(task) }, 400: { description: 'bad' }, 404: { description: 'none' }, 409: { description: 'a test failed' } }
      },
      delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none' } } }
    }
  }
})
type TaskFault = 'a patch that keeps nothing' | 'every patch refused, and a delete that keeps the task'

/** A tasks service that applies JSON Patches sent in `patchType` as RFC 6902 has them, but for `fault`. */
async function verifiedTasks (t: Test, fault?: TaskFault, patchType: JsonPatchType = 'application/json-patch+json') {
  const tasks = new Map<number, { title: string, done?: boolean }>()
  const validTask = (value: any): boolean => typeof value?.title === 'string' && value.title !== '' && ['undefined', 'boolean'].includes(typeof value.done) && Object.keys(value).every((name) => ['title', 'done'].includes(name))
  const { verification, url } = await verifiedAgainst(t, tasksDocument(patchType), (req, res, text) => {
    const sent = text === '' ? undefined : JSON.parse(text)
    if (req.method === 'POST') {
      if (req.headers['content-type'] !== 'application/json' || !validTask(sent)) return answer(res, 400)
      const id = tasks.size + 1
      tasks.set(id, sent)
      return answer(res, 201, { ...sent, id })
    }
    const id = Number(/^\/tasks\/(\d+)$/.exec(req.url!)?.[1])
    const there = tasks.get(id)
    if (there === undefined) return answer(res, 404)
    if (req.method === 'GET') return answer(res, 200, { ...there, id })
    if (req.method === 'DELETE') {
      if (fault !== 'every patch refused, and a delete that keeps the task') tasks.delete(id)
      return answer(res, 204)
    }
    if (fault === 'every patch refused, and a delete that keeps the task' || req.headers['content-type'] !== patchType || !Array.isArray(sent)) return answer(res, 400)
    const changed: Record<string, unknown> = { ...there }
    for (const { op, path, value } of sent) {
      const name = path.slice(1)
      if (op === 'test' && JSON.stringify(changed[name]) !== JSON.stringify(value)) return answer(res, 409)
      if (op === 'remove') delete changed[name]
      if (op === 'add' || op === 'replace') changed[name] = value
    }
    if (!validTask(changed)) return answer(res, 400)
    if (fault !== 'a patch that keeps nothing') tasks.set(id, changed as any)
    answer(res, 200, { ...changed, id })
  })
  return { verification, report: reportOf(verification, 'tasks.json', url) }
}

t.test('a PATCH in JSON Patch (RFC 6902), in its media type or in JSON: sent as operations that write what a create would, and what they write read back; one answered 200 that keeps nothing: read_after_write', async (t) => {
  for (const patchType of JSON_PATCH_TYPES) {
    await t.test(patchType, async (t) => {
      const kept = await verifiedTasks(t, undefined, patchType)
      t.same(kept.report.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'a service that applies them: nothing found')
      t.same(kept.report.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
      const patches = kept.verification.operations.find((o) => o.method === 'PATCH')!
      t.ok(patches.requests > 0, 'its patches counted as the PATCH operation\'s')

      const { report } = await verifiedTasks(t, 'a patch that keeps nothing', patchType)
      const found = report.operations.flatMap((o) => o.violations)
      t.same(found.map((v) => v.check), ['read_after_write'], 'found, and nothing else')
      t.same(found[0]?.steps?.map((s) => s.step), ['create', 'patch', 'read'], 'shrunk to the patch and the read after it')
      t.match(found[0]?.steps?.[1].curl, new RegExp(`-H 'content-type: ${patchType.replace('+', '\\+')}' --data-binary '\\[\\{"op":"(add|replace)","path":"/(title|done)","value":`), 'the patch as operations, in the media type the document gives it')
      t.match(found[0]?.detail, /^PATCH \/tasks\/\{id\} wrote what the read does not answer: (title|done): written/, 'the member it wrote, read otherwise')
    })
  }
})

// Partitions as API Platform describes them (alertersystem.com's): a patch in JSON Merge Patch
// whose schema requires a member that may be null, so that a patch of all may not leave its
// nulls out, and a read that requires that member too.
const partitionFields = { name: { type: 'string', nullable: true, maxLength: 20 }, notes: { type: 'string', nullable: true, maxLength: 100 } }
const partition = json({ type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', readOnly: true }, ...partitionFields } })
const PARTITIONS = {
  openapi: '3.0.3',
  info: { title: 'Partitions', version: '1.0.0' },
  paths: {
    '/partitions': { post: { requestBody: { required: true, ...json({ type: 'object', required: ['name'], properties: partitionFields }) }, responses: { 201: { description: 'made', ...partition }, 400: { description: 'bad' }, 415: { description: 'not JSON' } } } },
    '/partitions/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { responses: { 200: { description: 'the partition', ...partition }, 404: { description: 'none' } } },
      patch: { requestBody: { required: true, content: { 'application/merge-patch+json': { schema: { type: 'object', required: ['name'], properties: partitionFields } } } }, responses: { 200: { description: 'patched', ...partition }, 400: { description: 'bad' }, 404: { description: 'none' }, 415: { description: 'not a merge patch' } } }
    }
  }
}

t.test('a JSON Merge Patch (RFC 7396) whose nulls it must send: each null removes what it names, and the read is not held to it; a service that removes it, or keeps the null, and the project\'s mock: nothing found; one that drops the patch: read_after_write', async (t) => {
  // Seed 1 draws a patch of all with both members null: the read once was held to both.
  const within = (value: unknown, most: number): boolean => value === undefined || value === null || (typeof value === 'string' && [...value].length <= most)
  const valid = (body: any): boolean => typeof body === 'object' && body !== null && !Array.isArray(body) && 'name' in body && within(body.name, 20) && within(body.notes, 100)
  for (const kind of ['removes', 'keeps the null', 'drops the patch'] as const) {
    const partitions = new Map<string, Record<string, unknown>>()
    const { verification } = await verifiedAgainst(t, PARTITIONS, (req, res, text) => {
      let body: any
      try {
        body = text === '' ? undefined : JSON.parse(text)
      } catch {
        return answer(res, 400)
      }
      if (req.method !== 'GET' && req.headers['content-type'] !== (req.method === 'POST' ? 'application/json' : 'application/merge-patch+json')) return answer(res, 415)
      if (req.method !== 'GET' && !valid(body)) return answer(res, 400)
      if (req.method === 'POST' && req.url === '/partitions') {
        const made = { ...body, id: String(partitions.size + 1) }
        partitions.set(made.id, made)
        return answer(res, 201, made)
      }
      const there = partitions.get(/^\/partitions\/([^/]+)$/.exec(req.url!)?.[1] ?? '')
      if (there === undefined) return answer(res, 404)
      if (req.method === 'GET') return answer(res, 200, { name: 'unnamed', ...there })
      // A name removed reads as the service's default: the read requires one.
      for (const [name, value] of kind === 'drops the patch' ? [] : Object.entries(body)) {
        if (value === null && kind === 'removes') delete there[name]
        else there[name] = value
      }
      answer(res, 200, { name: 'unnamed', ...there })
    }, 1)
    const found = verification.operations.flatMap((o) => o.violations)
    if (kind !== 'drops the patch') {
      t.same(found.map((v) => v.detail), [], `a service that ${kind}: nothing found`)
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], 'a service that drops the patch: found, once')
    t.match(found[0]?.detail, /^PATCH \/partitions\/\{id\} wrote what the read does not answer: /)
  }
  const { found } = await verifiedMock(t, PARTITIONS, 1)
  t.same(found, [], 'the project\'s mock: nothing found')
})

t.test('the Petstore\'s PUT /pet, which names the pet by the id in its body: followed as the replace; one answered 200 that keeps nothing: read_after_write', async (t) => {
  /** The Petstore's pets kept in a map, but for a PUT that keeps nothing where `losing`. */
  const served = async (losing: boolean) => {
    const kept = new Map<number, object>()
    const { verification, url } = await verifiedAgainst(t, pets, (req, res, text) => {
      let sent: any
      try { sent = JSON.parse(text) } catch {}
      const valid = req.headers['content-type'] === 'application/json' && typeof sent?.name === 'string' && Array.isArray(sent.photoUrls) && sent.photoUrls.every((url: unknown) => typeof url === 'string') &&
        (sent.id === undefined || Number.isInteger(sent.id)) && [undefined, 'available', 'pending', 'sold'].includes(sent.status) && Object.keys(sent).every((name) => ['id', 'name', 'photoUrls', 'status'].includes(name))
      if (req.url === '/pet' && req.method === 'POST') {
        if (!valid) return answer(res, 400)
        const pet = { ...sent, id: sent.id ?? Math.max(0, ...kept.keys()) + 1 }
        kept.set(pet.id, pet)
        return answer(res, 200, pet)
      }
      if (req.url === '/pet' && req.method === 'PUT') {
        if (!valid) return answer(res, 400)
        if (!kept.has(sent.id)) return answer(res, 404)
        if (!losing) kept.set(sent.id, sent)
        return answer(res, 200, sent)
      }
      const id = /^\/pet\/(-?\d+)$/.exec(req.url!)?.[1]
      if (id === undefined) return answer(res, 400)
      if (req.method === 'DELETE') {
        kept.delete(Number(id))
        return answer(res, 200)
      }
      if (!kept.has(Number(id))) return answer(res, 404)
      answer(res, 200, kept.get(Number(id)))
    })
    return reportOf(verification, 'pets.json', url)
  }
  const keeping = await served(false)
  t.same(keeping.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`)), [], 'a service that keeps its word: nothing found')
  t.same(keeping.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
  t.ok(keeping.operations.find((o) => o.operationId === 'updatePet')!.requests > 0, 'the PUT sent in it')

  const found = (await served(true)).operations.flatMap((o) => o.violations)
  t.same(found.map((v) => v.check), ['read_after_write'], 'found, and nothing else')
  t.same(found[0]?.steps?.map((s) => s.step), ['create', 'replace', 'read'], 'shrunk to the PUT and the read after it')
  t.match(found[0]?.steps?.[1].curl, /-X PUT 'http:\/\/127\.0\.0\.1:\d+\/pet' .*--data-binary '\{.*"id":\d+/, 'the PUT names the pet the create made, in its body')
  t.match(found[0]?.detail, /^PUT \/pet wrote what the read does not answer: /)

  t.same((await verifiedMock(t, pets)).found, [], 'the project\'s stateful mock of the same document: nothing found')
})

t.test('a change the service refuses (4xx) does nothing: the chain goes on from what was there, so a delete that keeps the task is found behind it', async (t) => {
  const { report } = await verifiedTasks(t, 'every patch refused, and a delete that keeps the task')
  const found = report.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${v.check}`))
  t.same(found.sort(), ['DELETE use_after_free', 'PATCH positive_data_acceptance'], 'the refusal of a valid patch, and the delete that kept the task')
  t.match(report.operations.find((o) => o.method === 'POST')!.notes, ['sequence of /tasks/{id}: patch: answered 400, gone on from what was there before', 'sequence of /tasks/{id}: patch all: answered 400, gone on from what was there before'], 'each refusal the chain went past, noted')
})

t.test('an item read in a oneOf of objects that require nothing (intellifi\'s: where it is, by a location, its id or its URL), which every object matches more than once, and written without it: the project\'s mock answers it as written, with a member of the wrong type for each branch but one, and its verifier finds nothing', async (t) => {
  const where = { oneOf: [{ type: 'object', properties: { location: { type: 'object', properties: { name: { type: 'string' } } } } }, { type: 'object', properties: { location_id: { type: 'string' } } }, { type: 'object', properties: { location_url: { type: 'string' } } }] }
  const metadata = { type: 'object', example: { foo: 'bar' } }
  const written = { type: 'object', properties: { label: { type: 'string' }, metadata } }
  const item = { allOf: [{ type: 'object', properties: { id: { type: 'integer' }, label: { type: 'string' }, metadata } }, where] }
  const { app, found, verification } = await verifiedMock(t, {
    openapi: '3.1.0',
    info: { title: 'Items', version: '1.0.0' },
    paths: {
      '/items': { post: { requestBody: { required: true, ...json(written) }, responses: { 201: { description: 'made', ...json(item) } } } },
      '/items/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'the item', ...json(item) }, 404: { description: 'none' } } },
        put: { requestBody: { required: true, ...json(written) }, responses: { 200: { description: 'replaced', ...json(item) }, 404: { description: 'none' } } }
      }
    }
  })
  t.same(found, [], 'no answer broken, nothing read back but what was written')
  t.ok(verification.chains.requests >= 3, `${verification.chains.requests} requests in its chain`)
  const made = (await app.inject({ method: 'POST', url: '/items', payload: { label: 'pallet' } })).json()
  t.same(made, { id: made.id, label: 'pallet', location_id: null, location_url: null }, 'what was written, with null for two of the branches, not the document\'s sample filled in')
})

// Docks whose key the client gives (VTEX's logistics): one given as "." names no path segment, as a
// URL's dot segments are taken out (/docks/./deactivation is /docks/deactivation).
const docksDocument = (id: object) => {
  const dock = { type: 'object', required: ['id', 'name'], properties: { id, name: { type: 'string' } } }
  return {
    openapi: '3.1.0',
    info: { title: 'Docks', version: '1.0.0' },
    paths: {
      // Verified first: its dock is made with the create's first body, the example.
      '/docks/{dockId}/deactivation': {
        parameters: [{ name: 'dockId', in: 'path', required: true, schema: { type: 'string' } }],
        post: { responses: { 204: { description: 'deactivated' }, 404: { description: 'none' } } }
      },
      '/docks': { post: { requestBody: { required: true, content: { 'application/json': { schema: dock, example: { id: '.', name: 'north' } } } }, responses: { 201: { description: 'made', ...json(dock) }, 400: { description: 'bad' }, 409: { description: 'taken' } } } },
      '/docks/{dockId}': {
        parameters: [{ name: 'dockId', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { 200: { description: 'the dock', ...json(dock) }, 404: { description: 'none' } } }
      }
    }
  }
}

t.test('a key that names no path segment (".", the create\'s example): a dock made first for the requests after it is made with another key; where "." is the only key, it is not put in their paths; none of them sent where its dot segment takes them', async (t) => {
  for (const [why, id] of [['any key', { type: 'string', minLength: 1 }], ['"." alone', { const: '.' }]] as const) {
    await t.test(why, async (t) => {
      const docks = new Map<string, unknown>()
      const paths: string[] = []
      const { verification } = await verifiedAgainst(t, docksDocument(id), (req, res, text) => {
        const path = req.url!.split('?')[0]
        const done = (status: number, body?: unknown) => { paths.push(`${req.method!} ${path} ${status}`); answer(res, status, body) }
        if (path === '/docks') {
          const sent = text === '' ? undefined : JSON.parse(text)
          if (typeof sent?.id !== 'string' || (id.type === 'string' ? sent.id === '' : sent.id !== '.') || typeof sent.name !== 'string') return done(400)
          if (docks.has(sent.id)) return done(409)
          docks.set(sent.id, sent)
          return done(201, sent)
        }
        const [, key, deactivation] = /^\/docks\/([^/]+)(\/deactivation)?$/.exec(path) ?? []
        const there = key === undefined ? undefined : docks.get(decodeURIComponent(key))
        if (there === undefined) return done(404)
        return deactivation === undefined ? done(200, there) : done(204)
      })
      t.ok(docks.has('.'), 'the example\'s dock made, its key "."')
      t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`)), [], 'nothing found')
      t.same(paths.filter((p) => /^\w+ \/docks\/deactivation /.test(p)), [], 'no request sent to /docks/deactivation, where /docks/./deactivation goes')
      const deactivated = paths.filter((p) => /^POST \/docks\/[^/]+\/deactivation 204$/.test(p))
      if (why === 'any key') t.ok(deactivated.length > 0, `its deactivation sent of a dock made for it: ${deactivated[0]}`)
      else t.ok(paths.some((p) => /^POST \/docks\/[^/]+\/deactivation 404$/.test(p)), 'its deactivation sent, of a dock not there')
    })
  }
})

t.test('the project\'s own stateful mock of a document that patches in JSON Patch, in its media type or in JSON: nothing found', async (t) => {
  for (const patchType of JSON_PATCH_TYPES) {
    const { verification, found } = await verifiedMock(t, tasksDocument(patchType))
    t.same(found, [], `${patchType}: the patches applied, and read back`)
    t.same(verification.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
  }
})

// Articles in JSON:API's shape: every body and answer holds the item in {"data": …}, and a patch
// must name the article it patches (data.id) as its path does.
const attributes = { type: 'object', properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' } } }
const jsonApi = (data: object) => ({ content: { 'application/vnd.api+json': { schema: { type: 'object', required: ['data'], properties: { data } } } } })
const article = { type: 'object', required: ['type', 'id', 'attributes'], properties: { type: { enum: ['articles'] }, id: { type: 'string' }, attributes: { ...attributes, required: ['title'] } } }
const ARTICLES = {
  openapi: '3.0.3',
  info: { title: 'Articles', version: '1.0.0' },
  paths: {
    '/articles': { post: { requestBody: { required: true, ...jsonApi({ type: 'object', required: ['type', 'attributes'], properties: { type: { enum: ['articles'] }, attributes: { ...attributes, required: ['title'] } } }) }, responses: { 201: { description: 'made', ...jsonApi(article) }, 400: { description: 'bad' } } } },
    '/articles/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } }],
      get: { responses: { 200: { description: 'the article', ...jsonApi(article) }, 404: { description: 'none' } } },
      patch: { requestBody: { required: true, ...jsonApi({ type: 'object', required: ['type', 'id'], properties: { type: { enum: ['articles'] }, id: { type: 'string' }, attributes } }) }, responses: { 200: { description: 'patched', ...jsonApi(article) }, 400: { description: 'bad' }, 404: { description: 'none' }, 409: { description: 'another article' } } }
    }
  }
}

t.test('JSON:API\'s envelope: a patch names the article it patches, and what the bodies hold in {"data": …} is read back; a create or a patch that loses an attribute: read_after_write', async (t) => {
  for (const fault of [undefined, 'a create that drops the body', 'a patch that keeps nothing'] as const) {
    const articles = new Map<string, Record<string, unknown>>()
    let mismatched = 0
    const { verification, url } = await verifiedAgainst(t, ARTICLES, (req, res, text) => {
      const reply = (status: number, body?: unknown): void => answer(res, status, body, { 'content-type': 'application/vnd.api+json' })
      if (text !== '' && req.headers['content-type'] !== 'application/vnd.api+json') return reply(415)
      const data = text === '' ? undefined : JSON.parse(text)?.data
      const valid = (a: any, required: boolean): boolean => a !== null && typeof a === 'object' && (!required || typeof a.title === 'string') && (a.title === undefined || (typeof a.title === 'string' && a.title !== '')) && ['undefined', 'string'].includes(typeof a.body)
      if (req.method === 'POST') {
        if (data?.type !== 'articles' || !valid(data.attributes, true)) return reply(400)
        const id = String(articles.size + 1)
        articles.set(id, fault === 'a create that drops the body' ? { title: data.attributes.title } : data.attributes)
        return reply(201, { data: { type: 'articles', id, attributes: articles.get(id) } })
      }
      const id = /^\/articles\/(\d+)$/.exec(req.url!)?.[1] ?? ''
      const there = articles.get(id)
      if (there === undefined) return reply(404)
      if (req.method === 'GET') return reply(200, { data: { type: 'articles', id, attributes: there } })
      if (data?.type !== 'articles' || typeof data.id !== 'string' || (data.attributes !== undefined && !valid(data.attributes, false))) return reply(400)
      if (data.id !== id && ++mismatched) return reply(409)
      const changed = { ...there, ...data.attributes }
      if (fault !== 'a patch that keeps nothing') articles.set(id, changed)
      reply(200, { data: { type: 'articles', id, attributes: changed } })
    })
    const report = reportOf(verification, 'articles.json', url)
    const found = report.operations.flatMap((o) => o.violations)
    if (fault === undefined) {
      t.same(found.map((v) => v.detail), [], 'a service that keeps its word: nothing found')
      t.same(report.operations.flatMap((o) => o.notes), [], 'its chain followed to its end, no patch refused')
      t.equal(mismatched, 0, 'each patch of the chain named the article of its path (data.id)')
      continue
    }
    t.same(found.map((v) => `${v.check}: ${v.detail.replace(/: attributes: .*/, '')}`), [`read_after_write: ${fault === 'a patch that keeps nothing' ? 'PATCH' : 'POST'} /articles${fault === 'a patch that keeps nothing' ? '/{id}' : ''} wrote what the read does not answer`], `${fault}: found, in the attributes`)
    t.same(found[0]?.steps?.map((s) => s.step), fault === 'a patch that keeps nothing' ? ['create', 'patch', 'read'] : ['create', 'read'], 'shrunk')
  }

  t.same((await verifiedMock(t, ARTICLES)).found, [], 'the project\'s stateful mock of the same document, which keeps the item within the envelope: nothing found')
})

t.test('a key the client gives within the envelope its bodies hold the item in (Wowza\'s {"output_stream_target": {"stream_target_id": …}}): each create gives one not given before, and two of one key are not unique_keys; the project\'s mock: nothing found', async (t) => {
  const target = { type: 'object', required: ['target_id'], properties: { target_id: { type: 'string', minLength: 1, example: '1234abcd' }, backup: { type: 'boolean' } } }
  const enveloped = json({ type: 'object', required: ['target'], properties: { target } })
  const TARGETS = {
    openapi: '3.0.3',
    info: { title: 'Targets', version: '1.0.0' },
    paths: {
      '/targets': { post: { requestBody: { required: true, ...enveloped }, responses: { 200: { description: 'made', ...enveloped }, 400: { description: 'bad' } } } },
      '/targets/{target_id}': { get: { parameters: [{ name: 'target_id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...enveloped }, 404: { description: 'none' } } } }
    }
  }
  const { inferred, verification, found } = await verifiedMock(t, TARGETS)
  t.same(inferred, ['/targets/{target_id}: targets keyed by target_id (read GET, create POST)'], 'the key found within the envelope')
  t.same(found, [], 'nothing found')
  t.same(verification.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
})

t.test('the project\'s own stateful mock of the same document: nothing found either', async (t) => {
  const { verification, found } = await verifiedMock(t, THINGS)
  t.same(found, [])
  t.equal(verification.chains.resources, 5)
})

for (const [fault, { check, steps }] of Object.entries(SEQUENCE_FAULTS) as Array<[SequenceFault, typeof SEQUENCE_FAULTS[SequenceFault]]>) {
  t.test(`${fault}: found by ${check}, shrunk to ${steps.join(', ')}`, async (t) => {
    const { report } = await verified(t, fault)
    const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
    const named = found.filter((v) => v.check === check)
    t.equal(named.length, 1, `${check} names it once: ${JSON.stringify(found.map((v) => `${v.operation} ${v.check}: ${v.detail}`))}`)
    t.same(named[0]?.steps?.map((s) => s.step), steps, 'the shortest sequence that fails')
    for (const step of named[0]?.steps ?? []) t.match(step.curl, /^curl -sS -i -X (GET|POST|PATCH|PUT|DELETE) 'http:\/\/127\.0\.0\.1:\d+\/things/, `${step.step}: its curl`)
    const summary = summaryOf(report)
    t.match(summary, new RegExp(`✗ ${check}`))
    t.match(summary, /1\. create: POST \/things → 201/, 'the steps in the terminal')
    t.match(junitOf(report), /1\. create: POST \/things → 201/, 'and in JUnit')
    t.same(found.filter((v) => v.check !== check).map((v) => v.check), [], 'nothing else')
  })
}

for (const [fault, { check, steps }] of Object.entries(GADGET_FAULTS) as Array<[GadgetFault, typeof GADGET_FAULTS[GadgetFault]]>) {
  t.test(`${fault}: a resource a PUT makes under the key the client chooses is followed too, found by ${check}, shrunk to ${steps.join(', ')}`, async (t) => {
    const { report } = await verified(t, fault)
    const found = report.operations.flatMap((o) => o.violations.map((v) => ({ ...v, operation: `${o.method} ${o.path}` })))
    t.same(found.map((v) => `${v.operation} ${v.check}`), [`${check === 'use_after_free' ? 'DELETE' : 'PUT'} /gadgets/{sku} ${check}`], `${check} names it once, and nothing else: ${JSON.stringify(found.map((v) => v.detail))}`)
    t.same(found[0]?.steps?.map((s) => s.step), steps, 'the shortest sequence that fails')
    t.match(found[0]?.steps?.[0]?.request, /^PUT \/gadgets\/[A-Z]{3}-\d{3}$/, 'made by a PUT under a key of the document\'s pattern')
    t.ok(found[0]?.steps?.slice(1).every((s) => s.request.endsWith(found[0].steps![0].request.split('/').at(-1)!)), 'and every later step under that key')
  })
}

t.test('Stripe\'s other shapes, against the project\'s stateful mock over HTTP: a GET with an optional empty form, queries that together pass a server\'s header limit, nested forms (a list in an object, an object with no members, which a form cannot spell): nothing found', async (t) => {
  const text = { type: 'string', minLength: 1, maxLength: 3000 }
  const form = (schema: object) => ({ required: false, content: { 'application/x-www-form-urlencoded': { encoding: { filters: { style: 'deepObject', explode: true }, options: { style: 'deepObject', explode: true } }, schema } } })
  const written = { type: 'object', additionalProperties: false, properties: { name: { type: 'string', maxLength: 40 }, filters: { type: 'object', properties: { countries: { type: 'array', items: { type: 'string', enum: ['fr', 'de'] } } } }, options: { type: 'object', properties: { gift: { type: 'boolean' } } }, marker: { type: 'object', properties: {} } } }
  const thing = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, ...written.properties } }
  const STRIPE = {
    openapi: '3.0.3',
    info: { title: 'Things', version: '1.0.0' },
    paths: {
      '/things': {
        get: { parameters: ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ name, in: 'query', schema: text })), requestBody: form({ type: 'object', additionalProperties: false, properties: {} }), responses: { 200: { description: 'them', ...json({ type: 'array', items: thing }) } } },
        post: { requestBody: form(written), responses: { 200: { description: 'made', ...json(thing) } } }
      },
      '/things/{thing}': {
        parameters: [{ name: 'thing', in: 'path', required: true, schema: { type: 'string' } }],
        get: { requestBody: form({ type: 'object', additionalProperties: false, properties: {} }), responses: { 200: { description: 'it', ...json(thing) }, 404: { description: 'none' } } }
      }
    }
  }
  const { app, document } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(STRIPE) }, 'things.json')
  t.teardown(() => app.close())
  const http = httpTransport(await app.listen({ port: 0, host: '127.0.0.1' }), { timeoutMs: 10_000, connections: 4 })
  t.teardown(http.close)
  const verification = await verify(document, http.send, { seed: 7 })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}: ${v.detail}`)), [], 'no undeclared media type "accepted" for an empty body that is no body; no 431 from six long values at once; what the forms wrote read back as the server reads them')
  t.ok(verification.chains.requests >= 3, 'the things\' chain followed')
})

t.test('what a form wrote is compared as a server reads it: an object with no members sends no field, and is not read back', async (t) => {
  const written = { type: 'object', additionalProperties: false, properties: { name: { type: 'string', maxLength: 40 }, marker: { type: 'object', properties: {}, additionalProperties: false } } }
  const MARKED = {
    openapi: '3.0.3',
    info: { title: 'Marked', version: '1.0.0' },
    paths: {
      '/things': { post: { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: written } } }, responses: { 200: { description: 'made', ...json({ type: 'object', required: ['id'], properties: { id: { type: 'string' }, ...written.properties } }) }, 400: { description: 'bad' }, 415: { description: 'not a form' } } } },
      '/things/{thing}': { get: { parameters: [{ name: 'thing', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...json({ type: 'object', required: ['id'], properties: { id: { type: 'string' }, ...written.properties } }) }, 404: { description: 'none' } } } }
    }
  }
  const things = new Map<string, Record<string, string>>()
  const { verification } = await verifiedAgainst(t, MARKED, (req, res, text) => {
    const fields = Object.fromEntries(new URLSearchParams(text))
    if (req.method === 'POST') {
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return answer(res, 415)
      if (Object.keys(fields).some((name) => name !== 'name') || (fields.name ?? '').length > 40) return answer(res, 400)
      const made = { id: `t${things.size + 1}`, ...fields }
      things.set(made.id, made)
      return answer(res, 200, made)
    }
    const there = things.get(req.url!.split('/')[2])
    return there === undefined ? answer(res, 404) : answer(res, 200, there)
  })
  t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], 'nothing found: the marker {} was never sent')
  t.ok(verification.chains.requests >= 2, 'the chain followed')
})

// Settings kept under a key the client gives in the path, whose item holds no key of its own
// (PUT /boards/{board}/settings/{name} of {"value": …, "position": [x, y]}): 3.1's tuple among them.
const setting = { type: 'object', required: ['value', 'position'], additionalProperties: false, properties: { value: { type: 'string', minLength: 1 }, position: { type: 'array', prefixItems: [{ type: 'integer', minimum: 0 }, { type: 'integer', minimum: 0 }], items: false, minItems: 2 } } }
const SETTINGS = {
  openapi: '3.1.0',
  info: { title: 'Settings', version: '1.0.0' },
  paths: {
    '/boards/{board}/settings/{name}': {
      parameters: [{ name: 'board', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]{1,8}$' } }, { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]{1,16}$' } }],
      put: { requestBody: { required: true, ...json(setting) }, responses: { 200: { description: 'replaced', ...json(setting) }, 201: { description: 'made', ...json(setting) }, 400: { description: 'bad' } } },
      get: { responses: { 200: { description: 'the setting', ...json(setting) }, 404: { description: 'none' } } },
      delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none' } } }
    }
  }
}

// The same, each operation with a board of its own in its example (as Vimeo's album_id): no create
// makes a board, so the chain names the one its PUT was sent under, not each step's own.
const settingsItem = SETTINGS.paths['/boards/{board}/settings/{name}']
const board = (example: string) => ({ ...settingsItem.parameters[0], schema: { ...settingsItem.parameters[0].schema, example } })
const SETTINGS_APART = { ...SETTINGS, paths: { '/boards/{board}/settings/{name}': { put: { ...settingsItem.put, parameters: [board('alpha'), settingsItem.parameters[1]] }, get: { ...settingsItem.get, parameters: [board('beta'), settingsItem.parameters[1]] }, delete: { ...settingsItem.delete, parameters: [board('gamma'), settingsItem.parameters[1]] } } } }

t.test('an item a PUT keeps under the path\'s key alone, holding none of its own: followed (replace, read, delete, read), under the board it was put on; one answered 201 that keeps nothing, or a tuple kept the wrong way round, found; one kept to its word, and the project\'s mock: nothing', async (t) => {
  for (const [document, fault] of [[SETTINGS, undefined], [SETTINGS_APART, undefined], [SETTINGS, 'a PUT answered 201 that keeps nothing'], [SETTINGS, 'a tuple kept the wrong way round']] as const) {
    const kept = new Map<string, any>()
    const { verification } = await verifiedAgainst(t, document, (req, res, text) => {
      const key = /^\/boards\/([a-z]{1,8})\/settings\/([a-z]{1,16})$/.exec(req.url!)?.slice(1).join('/')
      if (key === undefined) return answer(res, 400)
      if (req.method === 'PUT') {
        const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
        const valid = typeof sent?.value === 'string' && sent.value !== '' && Array.isArray(sent.position) && sent.position.length === 2 && sent.position.every((n: unknown) => Number.isInteger(n) && (n as number) >= 0) && Object.keys(sent).length === 2
        if (req.headers['content-type'] !== 'application/json' || !valid) return answer(res, 400)
        const had = kept.has(key)
        if (fault !== 'a PUT answered 201 that keeps nothing') kept.set(key, fault === 'a tuple kept the wrong way round' ? { ...sent, position: [...sent.position].reverse() } : sent)
        return answer(res, had ? 200 : 201, sent)
      }
      if (!kept.has(key)) return answer(res, 404)
      if (req.method === 'DELETE') return answer(res, 204, kept.delete(key) && undefined)
      answer(res, 200, kept.get(key))
    })
    const found = verification.operations.flatMap((o) => o.violations)
    if (fault === undefined) {
      t.same(found.map((v) => `${v.check}: ${v.detail}`), [], 'kept to its word: nothing found')
      t.same(verification.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
      t.same(verification.chains.resources, 1, `followed in sequences (${verification.chains.requests} requests)`)
      continue
    }
    t.same(found.map((v) => v.check), [fault === 'a PUT answered 201 that keeps nothing' ? 'ensure_resource_availability' : 'read_after_write'], `${fault}: found`)
    if (fault === 'a PUT answered 201 that keeps nothing') t.same(found[0]?.steps?.map((s) => s.step), ['create', 'read'], 'shrunk')
    else {
      // A first tuple that reads the same either way round ([0, 0]) hides it; the write after it does not.
      t.match(found[0]?.steps?.map((s) => s.step).join(', '), /^create, (replace all, )?read$/, 'shrunk')
      t.match(found[0]?.detail, /^PUT \/boards\/\{board\}\/settings\/\{name\} wrote what the read does not answer: position: written \[(\d+),(\d+)\], read \[\2,\1\]$/, 'the tuple, each way round')
    }
  }
  for (const document of [SETTINGS, SETTINGS_APART]) {
    const mocked = await verifiedMock(t, document)
    t.same(mocked.found, [], 'the project\'s stateful mock: nothing found')
    t.same(mocked.verification.operations.flatMap((o) => o.notes), [], 'its chain followed to its end')
  }
})

t.test('a create\'s Location with a malformed escape (%zz): named, and the run goes on', async (t) => {
  const note = { type: 'object', required: ['text'], properties: { id: { type: 'integer', readOnly: true }, text: { type: 'string' } } }
  const NOTES = {
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes': { post: { requestBody: { required: true, ...json(note) }, responses: { 201: { description: 'made', headers: { Location: { schema: { type: 'string' } } }, ...json(note) }, 400: { description: 'bad' } } } },
      '/notes/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'a note', ...json(note) }, 404: { description: 'none' } } } }
    }
  }
  const notes: string[] = []
  const { verification } = await verifiedAgainst(t, NOTES, (req, res, text) => {
    if (req.method === 'POST') {
      const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
      if (req.headers['content-type'] !== 'application/json' || typeof sent?.text !== 'string' || Object.keys(sent).length !== 1) return answer(res, 400)
      notes.push(sent.text)
      return answer(res, 201, { id: notes.length, text: sent.text }, { location: '/notes/%zz' })
    }
    const id = Number(/^\/notes\/(\d+)$/.exec(req.url!)?.[1])
    if (notes[id - 1] === undefined) return answer(res, 404)
    answer(res, 200, { id, text: notes[id - 1] })
  })
  const found = verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`))
  t.equal(found.length, 1, 'one violation')
  t.match(found, [/^ensure_resource_availability: notes (\d+) made, and its Location names no such item: \/notes\/%zz \(the item is \/notes\/\1\)$/])
})

t.test('a create that answers the new key alone (LUIS\'s POST /apps/, the app\'s GUID as a JSON string): the chain reads that key; a service whose read loses the name: found; one kept to its word, and the project\'s mock: nothing', async (t) => {
  const app = { type: 'object', required: ['name'], properties: { id: { type: 'string', format: 'uuid', readOnly: true }, name: { type: 'string', minLength: 1 } } }
  const APPS = {
    openapi: '3.1.0',
    info: { title: 'Apps', version: '1.0.0' },
    paths: {
      '/apps': { post: { requestBody: { required: true, ...json(app) }, responses: { 201: { description: 'its id', ...json({ type: 'string', format: 'uuid' }) }, 400: { description: 'bad' } } } },
      '/apps/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }], responses: { 200: { description: 'an app', ...json(app) }, 404: { description: 'none' } } } }
    }
  }
  let found = 0
  const service = (loses: boolean) => {
    const apps = new Map<string, string>()
    return (req: IncomingMessage, res: ServerResponse, text: string) => {
      if (req.method === 'POST') {
        const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
        if (req.headers['content-type'] !== 'application/json' || typeof sent?.name !== 'string' || sent.name === '' || Object.keys(sent).some((k) => k !== 'name')) return answer(res, 400)
        const id = randomUUID()
        apps.set(id, sent.name)
        return answer(res, 201, id)
      }
      const id = decodeURIComponent(req.url!.slice('/apps/'.length))
      if (!apps.has(id)) return answer(res, 404)
      found++
      answer(res, 200, { id, name: loses ? 'untitled' : apps.get(id) })
    }
  }
  const violations = (verification: Awaited<ReturnType<typeof verify>>) => verification.operations.flatMap((o) => o.violations.map((v) => v.check))
  const kept = await verifiedAgainst(t, APPS, service(false))
  t.same(violations(kept.verification), [], 'kept to its word: nothing found')
  t.ok(found > 0, `${found} reads of an app created`)
  t.same(violations((await verifiedAgainst(t, APPS, service(true))).verification), ['read_after_write'], 'a read that loses the name: found')
  const mocked = await verifiedMock(t, APPS)
  t.same([mocked.inferred, mocked.found], [['/apps/{id}: apps keyed by id (read GET, create POST)'], []], 'the project\'s mock: nothing')
})

t.test('a double past 2^53 (Google Wallet\'s coordinates, drawn as 9.8e16 and 1.9e202) read back as the service keeps its digits, exactly (a bigint): the same double, held; another: read_after_write', async (t) => {
  const doc = { openapi: '3.1.0', info: { title: 'Points', version: '1.0.0' }, paths: {} } as any
  const validators = createValidators(doc)
  const schema = { type: 'object', properties: { longitude: { type: 'number', format: 'double' }, far: { type: 'number' } } }
  const sent = { longitude: 98284389514910980, far: 1.9152671740658813e+202 }
  // As the verifier reads the answer's digits (parseExactJson): integers past 2^53, exactly.
  const read = { longitude: 98284389514910980n, far: 19152671740658813n * 10n ** 186n }
  t.same(unwritten(doc, validators, schema, undefined, sent, read), [], 'each read as the integer its digits spell, the double written')
  t.same(unwritten(doc, validators, schema, undefined, sent, { ...read, longitude: 98284389514911000n }), ['longitude: written 98284389514910980, read 98284389514911000'], 'an integer of another double: found')
})

t.test('a value read back in the store\'s own spelling of its format (a date-time as the same instant, a float as float32 keeps it, a uri as a URL parser writes it, a uuid in capitals, a set in another order): held; another instant (an offset dropped, drawn instants being at any), a float rounded to an integer, a set that lost a member: read_after_write', async (t) => {
  const doc = { openapi: '3.1.0', info: { title: 'Events', version: '1.0.0' }, paths: {} } as any
  const validators = createValidators(doc)
  const instant = { type: 'string', format: 'date-time' }
  const schema = { type: 'object', properties: { at: instant, price: { type: 'number', format: 'float' }, site: { type: 'string', format: 'uri' }, ref: { type: 'string', format: 'uuid' }, slots: { type: 'array', items: instant }, ends: { anyOf: [instant, { type: 'null' }] }, name: { type: 'string' }, tags: { type: 'array', uniqueItems: true, items: { type: 'string' } }, steps: { type: 'array', items: { type: 'string' } }, big: { type: 'integer', format: 'int64' } } }
  const sent = { at: '2019-08-24T14:15:22Z', price: 0.1, site: 'https://a.example', ref: 'd0fad5d6-e996-4437-8fb9-5f40bbcfd7cc', slots: ['2019-08-24T16:15:22+02:00'], ends: '2019-08-24T15:00:00.000Z', name: 'Fern', tags: ['shade', 'indoor'], steps: ['water', 'feed'], big: 2n ** 60n }
  t.same(unwritten(doc, validators, schema, undefined, sent, { at: '2019-08-24T14:15:22.000+00:00', price: 0.10000000149011612, site: 'https://a.example/', ref: 'D0FAD5D6-E996-4437-8FB9-5F40BBCFD7CC', slots: ['2019-08-24T14:15:22.000Z'], ends: '2019-08-24T15:00:00Z', name: 'Fern', tags: ['indoor', 'shade'], steps: ['water', 'feed'], big: 2n ** 60n }), [], 'each the same value, spelled as a store spells it; the set sorted; an int64 past 2^53 (a bigint, as the engine reads one)')
  t.same(unwritten(doc, validators, schema, undefined, sent, { ...sent, at: '2019-08-24T15:15:22Z', price: 0, slots: ['2019-08-24T16:15:22Z'], name: 'fern', tags: ['indoor', 'indoor'], steps: ['feed', 'water'], big: 2n ** 60n + 1n }), [
    'at: written "2019-08-24T14:15:22Z", read "2019-08-24T15:15:22Z"', 'price: written 0.1, read 0', 'slots: written ["2019-08-24T16:15:22+02:00"], read ["2019-08-24T16:15:22Z"]', 'name: written "Fern", read "fern"',
    'tags: written ["shade","indoor"], read ["indoor","indoor"]', 'steps: written ["water","feed"], read ["feed","water"]', 'big: written 1152921504606846976, read 1152921504606846977'
  ], 'another instant, another number, a string of no such format otherwise spelled, a set with a member lost, a list (no set) in another order, an int64 one more: found')

  const event = { type: 'object', required: ['id', 'title', 'startsAt'], properties: { id: { type: 'integer', readOnly: true }, title: { type: 'string', minLength: 1, maxLength: 20 }, startsAt: instant, price: { type: 'number', format: 'float', minimum: 0, maximum: 1000, examples: [12.75] }, site: { type: 'string', format: 'uri' }, ref: { type: 'string', format: 'uuid' } }, additionalProperties: false }
  const EVENTS = {
    openapi: '3.1.0',
    info: { title: 'Events', version: '1.0.0' },
    paths: {
      '/events': { post: { requestBody: { required: true, ...json(event) }, responses: { 201: { description: 'made', ...json(event) }, 400: { description: 'bad' } } } },
      '/events/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        get: { responses: { 200: { description: 'an event', ...json(event) }, 400: { description: 'bad' }, 404: { description: 'none' } } },
        put: { requestBody: { required: true, ...json(event) }, responses: { 200: { description: 'replaced', ...json(event) }, 400: { description: 'bad' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const fault of [undefined, 'an instant an hour off', 'a price rounded', 'an offset dropped'] as const) {
    const events: object[] = []
    const { verification } = await verifiedAgainst(t, EVENTS, (req, res, text) => {
      const id = /^\/events\/([1-9]\d*)$/.exec(req.url!)?.[1]
      if (req.method === 'POST' || (req.method === 'PUT' && id !== undefined && events[Number(id) - 1] !== undefined)) {
        const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
        const valid = req.headers['content-type'] === 'application/json' && typeof sent?.title === 'string' && sent.title.length >= 1 && sent.title.length <= 20 && !Number.isNaN(Date.parse(sent.startsAt)) &&
          (sent.price === undefined || (typeof sent.price === 'number' && sent.price >= 0 && sent.price <= 1000)) && (sent.site === undefined || URL.canParse(sent.site)) &&
          (sent.ref === undefined || /^[0-9a-f-]{36}$/i.test(sent.ref)) && Object.keys(sent).every((name) => ['title', 'startsAt', 'price', 'site', 'ref'].includes(name))
        if (!valid) return answer(res, 400)
        // Kept as a database keeps it: an instant in UTC as Python writes it, a float32, a URL parsed, a uuid in capitals.
        // (Drawn instants are at any offset: one dropped, a local time is kept as UTC.)
        const at = fault === 'an offset dropped' ? sent.startsAt.replace(/([+-]\d\d:\d\d|Z)$/i, 'Z') : sent.startsAt
        const startsAt = new Date(Date.parse(at) + (fault === 'an instant an hour off' ? 3_600_000 : 0)).toISOString().replace('Z', '+00:00')
        const price = sent.price === undefined ? undefined : fault === 'a price rounded' ? Math.round(sent.price) : Math.fround(sent.price)
        const stored = { id: id === undefined ? events.length + 1 : Number(id), title: sent.title, startsAt, price, site: sent.site && new URL(sent.site).href, ref: sent.ref?.toUpperCase() }
        events[stored.id - 1] = stored
        return answer(res, id === undefined ? 201 : 200, stored)
      }
      if (id === undefined) return answer(res, 400)
      const found = events[Number(id) - 1]
      return found === undefined ? answer(res, 404) : answer(res, 200, found)
    })
    const found = verification.operations.flatMap((o) => o.violations)
    if (fault === undefined) {
      t.same(found.map((v) => `${v.check}: ${v.detail}`), [], 'kept in its own spelling: nothing found')
      t.same(verification.chains.resources, 1, `followed in sequences (${verification.chains.requests} requests)`)
      continue
    }
    t.same(found.map((v) => v.check), ['read_after_write'], `${fault}: found`)
    t.match(found[0]?.detail, fault === 'a price rounded' ? /price: written [\d.]+, read \d+$/ : fault === 'an offset dropped' ? /startsAt: written "[^"]+[+-]\d\d:\d\d", read "[^"]+\+00:00"/ : /startsAt: written "[^"]+", read "[^"]+\+00:00"/, 'naming what differs')
  }
})

t.test('int64 ids past 2^53 (Go\'s, Java\'s, snowflakes): read exactly, each id its own, nothing found; a service that rounds them through a double: unique_keys', async (t) => {
  const fields = { name: { type: 'string', minLength: 1, maxLength: 30 }, count: { type: 'integer', format: 'int64' } }
  const thing = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', format: 'int64', readOnly: true }, ...fields } }
  const write = { required: true, ...json({ type: 'object', required: ['name'], properties: fields, additionalProperties: false }) }
  const THINGS64 = {
    openapi: '3.1.0',
    info: { title: 'Things', version: '1.0.0' },
    paths: {
      '/things': { post: { requestBody: write, responses: { 201: { description: 'made', ...json(thing) }, 400: { description: 'bad' } } } },
      '/things/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
        get: { responses: { 200: { description: 'a thing', ...json(thing) }, 400: { description: 'bad' }, 404: { description: 'none' } } },
        put: { requestBody: write, responses: { 200: { description: 'replaced', ...json(thing) }, 400: { description: 'bad' }, 404: { description: 'none' } } },
        delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const rounds of [false, true]) {
    // Ids from 2^60 up, kept and written as text, every digit (as Go or Java writes an int64); or,
    // where it rounds, answered as JavaScript's JSON.stringify writes the double it became.
    const things = new Map<bigint, string>()
    let next = 2n ** 60n + 1n
    const thingText = (id: bigint, body: string): string => `{"id":${rounds ? JSON.stringify(Number(id)) : id},${body.trim().slice(1)}`
    const { verification } = await verifiedAgainst(t, THINGS64, (req, res, text) => {
      const raw = /^\/things\/(-?\d{1,19})$/.exec(req.url!)?.[1]
      const reply = (status: number, body?: string) => { res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' }).end(body) }
      const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
      const valid = req.headers['content-type'] === 'application/json' && typeof sent?.name === 'string' && sent.name !== '' && [...sent.name].length <= 30 &&
        (sent.count === undefined || Number.isInteger(sent.count)) && Object.keys(sent).every((name) => name === 'name' || name === 'count')
      if (req.method === 'POST' && req.url === '/things') {
        if (!valid) return reply(400)
        const id = next++
        things.set(id, text)
        return reply(201, thingText(id, text))
      }
      if (raw === undefined) return reply(/^\/things\/[^/]+$/.test(req.url!) ? 400 : 404)
      const id = BigInt(raw)
      if (req.method === 'PUT' && !valid) return reply(400)
      if (!things.has(id)) return reply(404)
      if (req.method === 'DELETE') {
        things.delete(id)
        return reply(204)
      }
      if (req.method === 'PUT') things.set(id, text)
      reply(200, thingText(id, things.get(id)!))
    })
    const found = verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`))
    if (!rounds) {
      t.same(found, [], 'every id read exactly: no two alike, each read back, and no schema broken')
      t.equal(verification.chains.requests, 9, 'the chain to its end: create, create again, read, replace twice, delete, read')
    } else t.same(found, ['unique_keys: two creates answered with one key, 1152921504606847000'], 'two ids made, rounded to one double')
  }
})

t.test('a service that keeps an email unique (409 where one is taken, as by the operation\'s own requests): each write sent again with another body, chains to their end, nothing found; one whose replace keeps the old name: read_after_write', async (t) => {
  const fields = { email: { type: 'string', format: 'email', maxLength: 80 }, name: { type: 'string', maxLength: 20 } }
  const member = { type: 'object', required: ['id', 'email'], properties: { id: { type: 'integer', readOnly: true }, ...fields } }
  const write = { required: true, ...json({ type: 'object', required: ['email'], properties: fields, additionalProperties: false }) }
  const MEMBERS = {
    openapi: '3.1.0',
    info: { title: 'Members', version: '1.0.0' },
    paths: {
      '/members': { post: { requestBody: write, responses: { 201: { description: 'made', ...json(member) }, 400: { description: 'bad' }, 409: { description: 'email taken' } } } },
      '/members/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'a member', ...json(member) }, 404: { description: 'none' } } },
        put: { requestBody: write, responses: { 200: { description: 'replaced', ...json(member) }, 400: { description: 'bad' }, 404: { description: 'none' }, 409: { description: 'email taken' } } },
        delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none' } } }
      }
    }
  }
  for (const keepsName of [false, true]) {
    const members = new Map<number, { email: string, name?: string }>()
    let next = 1
    const { verification } = await verifiedAgainst(t, MEMBERS, (req, res, text) => {
      const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
      const valid = req.headers['content-type'] === 'application/json' && typeof sent?.email === 'string' && /^[^@\s]+@[^@\s]+$/.test(sent.email) && sent.email.length <= 80 &&
        (sent.name === undefined || (typeof sent.name === 'string' && [...sent.name].length <= 20)) && Object.keys(sent).every((name) => name === 'email' || name === 'name')
      const id = Number(/^\/members\/(\d+)$/.exec(req.url!)?.[1] ?? NaN)
      const taken = (email: string) => [...members].some(([other, m]) => other !== id && m.email.toLowerCase() === email.toLowerCase())
      if (req.method === 'POST' || req.method === 'PUT') {
        if (!valid) return answer(res, 400)
        if (req.method === 'PUT' && !members.has(id)) return answer(res, 404)
        if (taken(sent.email)) return answer(res, 409)
        const made = req.method === 'POST' ? next++ : id
        members.set(made, { email: sent.email, ...(keepsName && members.get(made)?.name !== undefined ? { name: members.get(made)!.name } : sent.name !== undefined && { name: sent.name }) })
        return answer(res, req.method === 'POST' ? 201 : 200, { id: made, ...members.get(made) })
      }
      if (!members.has(id)) return answer(res, 404)
      if (req.method === 'DELETE') {
        members.delete(id)
        return answer(res, 204)
      }
      answer(res, 200, { id, ...members.get(id) })
    })
    const found = verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}`))
    const notes = verification.operations.flatMap((o) => o.notes.filter((note) => note.startsWith('sequence')))
    if (!keepsName) {
      t.same([found, notes], [[], []], 'nothing found, every chain to its end: no write stopped by a conflict')
      t.ok(verification.chains.requests > 9, `${verification.chains.requests} requests: create, create again, read, replace, read, replace all, read, delete, read, and the writes a conflict refused`)
    } else t.same(found, ['PUT /members/{id} read_after_write'], 'the name a replace wrote, not kept')
  }
})

t.test('a service that honours Idempotency-Key (Stripe\'s, Mastodon\'s): two creates of one key answered as one, no unique_keys; the same answers where the document declares no such key: found', async (t) => {
  const payment = { type: 'object', required: ['id', 'amount'], properties: { id: { type: 'integer', readOnly: true }, amount: { type: 'integer', minimum: 1, maximum: 1000 } } }
  const payments = (declared: boolean) => ({
    openapi: '3.1.0',
    info: { title: 'Payments', version: '1.0.0' },
    paths: {
      '/payments': { post: { parameters: declared ? [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } }] : [], requestBody: { required: true, ...json(payment) }, responses: { 201: { description: 'made', ...json(payment) }, 400: { description: 'bad' } } } },
      '/payments/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'a payment', ...json(payment) }, 404: { description: 'none' } } } }
    }
  })
  for (const declared of [true, false]) {
    const kept = new Map<number, { amount: number }>()
    // What each idempotency key made; a create that carries none is answered as the last.
    const made = new Map<string, number>()
    const { verification } = await verifiedAgainst(t, payments(declared), (req, res, text) => {
      const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
      if (req.method === 'POST') {
        if (req.headers['content-type'] !== 'application/json' || !Number.isInteger(sent?.amount) || sent.amount < 1 || sent.amount > 1000) return answer(res, 400)
        const idempotency = String(req.headers['idempotency-key'] ?? '')
        const id = made.get(idempotency) ?? kept.size + 1
        if (!kept.has(id)) kept.set(id, { amount: sent.amount })
        made.set(idempotency, id)
        return answer(res, 201, { id, ...kept.get(id) })
      }
      const id = Number(/^\/payments\/(\d+)$/.exec(req.url!)?.[1] ?? NaN)
      return kept.has(id) ? answer(res, 200, { id, ...kept.get(id) }) : answer(res, 404)
    })
    const found = verification.operations.flatMap((o) => o.violations.map((v) => `${o.method} ${o.path} ${v.check}`))
    if (declared) {
      t.same(found, [], 'nothing found')
      t.ok(verification.chains.requests > 2, `chains sent (${verification.chains.requests} requests)`)
    } else t.same(found, ['POST /payments unique_keys'], 'two creates given one key')
  }
})

t.test('a write answered 202 (accepted, not yet done): nothing after it is judged, and a note says so; a create done at once and a delete accepted for later, the same', async (t) => {
  const job = { type: 'object', required: ['id', 'task'], properties: { id: { type: 'integer', readOnly: true }, task: { type: 'string', minLength: 1, maxLength: 20 } } }
  const JOBS = {
    openapi: '3.1.0',
    info: { title: 'Jobs', version: '1.0.0' },
    paths: {
      '/jobs': { post: { requestBody: { required: true, ...json(job) }, responses: { 201: { description: 'done', ...json(job) }, 202: { description: 'queued', ...json(job) }, 400: { description: 'bad' } } } },
      '/jobs/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        get: { responses: { 200: { description: 'a job', ...json(job) }, 400: { description: 'bad' }, 404: { description: 'none' } } },
        delete: { responses: { 202: { description: 'to be deleted' }, 204: { description: 'deleted' }, 400: { description: 'bad' }, 404: { description: 'none' } } }
      }
    }
  }
  // The queue: what is accepted is done after the run, as a busy worker would.
  for (const queued of ['creates', 'deletes'] as const) {
    const jobs = new Map<string, object>()
    let next = 1
    const { verification } = await verifiedAgainst(t, JOBS, (req, res, text) => {
      if (req.method === 'POST') {
        const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
        if (req.headers['content-type'] !== 'application/json' || typeof sent?.task !== 'string' || sent.task === '' || sent.task.length > 20) return answer(res, 400)
        const made = { id: next++, task: sent.task }
        if (queued === 'creates') return answer(res, 202, made)
        jobs.set(String(made.id), made)
        return answer(res, 201, made)
      }
      const id = /^\/jobs\/([1-9]\d*)$/.exec(req.url!)?.[1]
      if (id === undefined) return answer(res, 400)
      if (!jobs.has(id)) return answer(res, 404)
      if (req.method === 'DELETE') return answer(res, 202)
      answer(res, 200, jobs.get(id))
    })
    t.same(verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`)), [], `${queued} queued: nothing found`)
    t.match(verification.operations.flatMap((o) => o.notes).join('\n'), queued === 'creates' ? /create: answered 202 \(accepted, not yet done\): nothing after it is judged/ : /delete: answered 202 \(accepted, not yet done\): nothing after it is judged/, 'a note says where its chain stopped, and why')
  }
})

t.test('paths that end with a slash (Django REST framework\'s every one, FastAPI\'s collections): the create and the list found, shelves made before their books; a book created and not kept: found; the project\'s mock: nothing', async (t) => {
  const shelf = { type: 'object', required: ['id', 'room'], properties: { id: { type: 'integer', readOnly: true }, room: { type: 'string', minLength: 1, maxLength: 20 } } }
  const book = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer', readOnly: true }, title: { type: 'string', minLength: 1, maxLength: 20 } } }
  const key = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'integer', minimum: 1 } })
  const LIBRARY = {
    openapi: '3.1.0',
    info: { title: 'Library', version: '1.0.0' },
    paths: {
      '/shelves/': {
        get: { operationId: 'listShelves', responses: { 200: { description: 'shelves', ...json({ type: 'array', items: shelf }) } } },
        post: { operationId: 'addShelf', requestBody: { required: true, ...json(shelf) }, responses: { 201: { description: 'added', ...json(shelf) }, 400: { description: 'bad' } } }
      },
      '/shelves/{id}/': { get: { operationId: 'getShelf', parameters: [key('id')], responses: { 200: { description: 'a shelf', ...json(shelf) }, 404: { description: 'none' } } } },
      '/shelves/{shelf_pk}/books/': {
        post: { operationId: 'addBook', parameters: [key('shelf_pk')], requestBody: { required: true, ...json(book) }, responses: { 201: { description: 'added', ...json(book) }, 400: { description: 'bad' }, 404: { description: 'no shelf' } } }
      },
      '/shelves/{shelf_pk}/books/{id}/': { get: { operationId: 'getBook', parameters: [key('shelf_pk'), key('id')], responses: { 200: { description: 'a book', ...json(book) }, 404: { description: 'none' } } } }
    }
  }
  const mocked = await verifiedMock(t, LIBRARY)
  t.same(mocked.inferred, [
    '/shelves/{id}/: shelves keyed by id (read GET, create POST, list GET)',
    '/shelves/{shelf_pk}/books/{id}/: books keyed by id, each {shelf_pk} its own (read GET, create POST)'
  ], 'each item, its create and its list')
  t.same(mocked.found, [], 'the project\'s stateful mock: nothing found')
  t.same(mocked.verification.chains.resources, 2, 'both followed in sequences')

  const shelves = new Map<string, object>()
  let next = 1
  const { verification } = await verifiedAgainst(t, LIBRARY, (req, res, text) => {
    const sent = (() => { try { return JSON.parse(text) } catch { return undefined } })()
    const json = req.headers['content-type'] === 'application/json'
    const title = json && typeof sent?.title === 'string' && sent.title !== '' && sent.title.length <= 20
    const parts = /^\/shelves\/(?:([1-9]\d*)\/(?:books\/(?:([1-9]\d*)\/)?)?)?$/.exec(req.url!)
    if (parts === null) return answer(res, 404)
    const [, shelfId, bookId] = parts
    if (req.method === 'POST' && shelfId === undefined) {
      if (!json || typeof sent?.room !== 'string' || sent.room === '' || sent.room.length > 20) return answer(res, 400)
      const made = { id: next++, room: sent.room }
      shelves.set(String(made.id), made)
      return answer(res, 201, made)
    }
    if (req.method === 'GET' && shelfId === undefined) return answer(res, 200, [...shelves.values()])
    if (!shelves.has(shelfId)) return answer(res, 404)
    if (req.method === 'POST' && req.url!.endsWith('/books/')) return title ? answer(res, 201, { id: next++, title: sent.title }) : answer(res, 400) // and keeps nothing
    if (bookId === undefined) return answer(res, 200, shelves.get(shelfId))
    answer(res, 404)
  })
  const found = verification.operations.flatMap((o) => o.violations)
  t.same(found.map((v) => v.check), ['ensure_resource_availability'], 'a book created and not kept: found')
  // (Its shelf, made by an earlier chain, is still there: the shortest sequence needs no other.)
  t.same(found[0]?.steps?.map((s) => `${s.step}: ${s.route.method} ${s.route.path} → ${s.status}`), ['create: POST /shelves/{shelf_pk}/books/ → 201', 'read: GET /shelves/{shelf_pk}/books/{id}/ → 404'], 'shrunk to the book and its read')
})

t.test('two item paths of one collection (Superset\'s GET /dashboard/{id_or_slug}, PUT and DELETE /dashboard/{pk}): the create and the list are the reader\'s; the project\'s mock, nothing found', async (t) => {
  const dashboard = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer', readOnly: true }, title: { type: 'string', minLength: 1, maxLength: 20 } } }
  const result = json({ type: 'object', properties: { id: { type: 'integer' }, result: dashboard } })
  const DASHBOARDS = {
    openapi: '3.1.0',
    info: { title: 'Dashboards', version: '1.0.0' },
    paths: {
      '/dashboard/': {
        get: { operationId: 'listDashboards', responses: { 200: { description: 'dashboards', ...json({ type: 'object', properties: { result: { type: 'array', items: dashboard } } }) } } },
        post: { operationId: 'addDashboard', requestBody: { required: true, ...json(dashboard) }, responses: { 201: { description: 'added', ...result }, 400: { description: 'bad' } } }
      },
      '/dashboard/{id_or_slug}': { get: { operationId: 'getDashboard', parameters: [{ name: 'id_or_slug', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'a dashboard', ...json({ type: 'object', properties: { result: dashboard } }) }, 404: { description: 'none' } } } },
      '/dashboard/{pk}': {
        parameters: [{ name: 'pk', in: 'path', required: true, schema: { type: 'integer' } }],
        put: { operationId: 'putDashboard', requestBody: { required: true, ...json(dashboard) }, responses: { 200: { description: 'changed', ...result }, 404: { description: 'none' } } },
        delete: { operationId: 'deleteDashboard', responses: { 200: { description: 'deleted' }, 404: { description: 'none' } } }
      }
    }
  }
  const mocked = await verifiedMock(t, DASHBOARDS)
  t.same(mocked.inferred, [
    '/dashboard/{id_or_slug}: dashboard keyed by id (read GET, create POST, list GET)',
    '/dashboard/{pk}: dashboard keyed by id (replace PUT, delete DELETE)'
  ], 'the create and the list, the reader\'s alone')
  t.same(mocked.found, [], 'the project\'s stateful mock: nothing found')
})

t.test('a file part of a multipart write (format binary) is kept as a file: what the read answers of it is not compared; the form\'s other parts are, a lost one found', async (t) => {
  const template = { type: 'object', required: ['id', 'html'], properties: { id: { type: 'integer', readOnly: true }, html: { type: 'string' }, image: { type: 'string', maxLength: 255 } } }
  const TEMPLATES = {
    openapi: '3.1.0',
    info: { title: 'Templates', version: '1.0.0' },
    paths: {
      '/templates': { post: { requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', required: ['html'], properties: { html: { type: 'string' }, image: { type: 'string', format: 'binary' } } } } } }, responses: { 201: { description: 'made', ...json(template) }, 400: { description: 'bad' } } } },
      '/templates/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }], responses: { 200: { description: 'a template', ...json(template) }, 400: { description: 'bad' }, 404: { description: 'none' } } } }
    }
  }
  for (const fault of [undefined, 'its html lost'] as const) {
    const templates: object[] = []
    const { verification } = await verifiedAgainst(t, TEMPLATES, (req, res, text) => {
      if (req.method === 'POST') {
        // The parts by name, as a server's multipart parser gives them: the image stored as a file, answered by its URL.
        const parts = new Map([...text.matchAll(/name="([^"]+)"(; filename="[^"]*")?\r\n(?:[^\r\n]+\r\n)*\r\n([^]*?)\r\n--/g)].map(([, name, file, value]) => [name, { file: file !== undefined, value }]))
        if (!/^multipart\/form-data; boundary=/.test(req.headers['content-type'] ?? '') || parts.get('html') === undefined || parts.get('html')!.file) return answer(res, 400)
        const made = { id: templates.length + 1, html: fault === undefined ? parts.get('html')!.value : '', ...(parts.get('image')?.file === true && { image: `/files/${templates.length + 1}.bin` }) }
        templates.push(made)
        return answer(res, 201, made)
      }
      const found = templates[Number(/^\/templates\/([1-9]\d*)$/.exec(req.url!)?.[1]) - 1]
      return found === undefined ? answer(res, 404) : answer(res, 200, found)
    })
    const found = verification.operations.flatMap((o) => o.violations.map((v) => `${v.check}: ${v.detail}`))
    if (fault === undefined) t.same(found, [], 'the image answered by its URL: nothing found')
    else t.match(found, [/^read_after_write: POST \/templates wrote what the read does not answer: html: written "[^"]*", read ""$/], 'its html lost: found')
  }
})
