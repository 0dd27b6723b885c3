import { join } from 'node:path'
import t from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { loadDocument } from '../../src/openapi/document/document.ts'
import { describeInference, inferResources, singular } from '../../src/openapi/routes/resources.ts'
import { routeList } from '../../src/openapi/routes/routes.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { verify } from '../../src/openapi/verify/verifier.ts'
import { createThenRead } from '../helpers/read-after-write.ts'
import { injectTransport } from '../helpers/inject-transport.ts'
import { EXAMPLES, exampleNames } from '../helpers/readme-examples.ts'

// The resources the stateful mock infers (openapi/mock/resources.ts), on ReadMe's example
// documents: what it found, printed; and for each that can be created and read, a create made as
// the verifier makes one, then a read of what it answered.

t.test('singular names', async (t) => {
  t.same(['orders', 'addresses', 'categories', 'boxes', 'people', 'status', 'analysis'].map(singular), ['order', 'address', 'category', 'box', 'people', 'status', 'analysis'])
})

t.test('ReadMe\'s examples: what is inferred, and every create read back', async (t) => {
  const config = loadConfig({ LOG_LEVEL: 'silent' })
  const found = new Map<string, string[]>()
  let pairs = 0
  for (const name of exampleNames()) {
    const { app, document, routes } = await buildMock(config, await loadDocument(join(EXAMPLES, name)), name)
    try {
      const inference = inferResources(document, routes)
      const lines = describeInference(inference)
      if (lines.length > 0) t.comment(`${name}:\n  ${lines.join('\n  ')}`)
      found.set(name, lines)
      const validators = createValidators(document, name)
      for (const resource of inference.resources.filter((r) => r.operations.create !== undefined && r.operations.read !== undefined)) {
        // ReadMe's upload too, which answers 202 with its status: the mock names the item by a Location.
        const { outcome, detail } = await createThenRead(document, validators, app.inject.bind(app), resource)
        pairs++
        t.equal(outcome, 'read back', `${name} ${resource.item}${outcome === 'read back' ? '' : `: ${outcome}`}${detail === undefined ? '' : ` (${detail})`}`)
      }
    } finally {
      await app.close()
    }
  }
  t.ok(pairs >= 3, `${pairs} resources created and read back`)
  t.same(found.get('3.0/json/petstore.json'), [
    '/store/order/{orderId}: order keyed by id (read GET, delete DELETE, create POST)',
    '/user/{username}: user keyed by username (read GET, replace PUT, delete DELETE, create POST)',
    'not remembered: /pet/{petId}: nothing creates its items (no POST /pet that declares a success and takes one item, no PUT /pet/{petId})'
  ], 'the petstore: an order, a user (keyed by its username); not a pet, whose POST declares only 405')
  t.match(found.get('3.1/json/train-travel.json'), [/^\/bookings\/\{bookingId\}: bookings keyed by id \(read GET, delete DELETE, create POST, list GET\)$/], 'Train Travel\'s bookings, in its data envelope')
})

/** What is inferred of a document of these paths, a line each, as the mock prints it. */
function inferredOf (paths: object): string[] {
  const document: any = { openapi: '3.0.0', info: { title: 'Inferred', version: '1.0.0' }, paths }
  return describeInference(inferResources(document, routeList(document).routes))
}

t.test('a key\'s type read through allOf: an envelope named as the path\'s parameter (AWS Evidently\'s {"experiment": {allOf: [Experiment, a description]}}) is no key; a key of text so wrapped is', async (t) => {
  const experiment = { type: 'object', properties: { name: { type: 'string' }, arn: { type: 'string' } } }
  const described = (schema: object) => ({ allOf: [schema, { description: 'As AWS describes a member.' }] })
  const inferred = (item: object) => {
    const answer = { content: { 'application/json': { schema: item } } }
    return inferredOf({
      '/experiments': { post: { requestBody: { content: { 'application/json': { schema: experiment } } }, responses: { 200: { description: 'made', ...answer } } } },
      '/experiments/{experiment}': { get: { parameters: [{ name: 'experiment', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...answer } } } }
    })
  }
  t.same(inferred({ type: 'object', properties: { experiment: described(experiment) } }), ['not remembered: /experiments/{experiment}: no answer of it holds an item with a key ({experiment}, id, experimentId or experiment_id)'], 'the envelope is an object: no key')
  t.same(inferred({ type: 'object', properties: { experiment: described({ type: 'string' }), name: { type: 'string' } } }), ['/experiments/{experiment}: experiments keyed by experiment (read GET, create POST)'], 'a key of text, described')
})

t.test('a create whose body is a list (Mastodon\'s statuses, as its description has them) makes no one item: not remembered, and so said', async (t) => {
  const status = { type: 'object', required: ['id'], properties: { id: { type: 'string', readOnly: true }, text: { type: 'string' } } }
  const answer = { content: { 'application/json': { schema: status } } }
  const inferred = (written: object) => inferredOf({
    '/statuses': { post: { requestBody: { content: { 'application/json': { schema: written } } }, responses: { 200: { description: 'posted', ...answer } } } },
    '/statuses/{id}': { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], get: { responses: { 200: { description: 'it', ...answer } } }, delete: { responses: { 204: { description: 'gone' } } } }
  })
  t.same(inferred({ type: 'array', items: status }), ['not remembered: /statuses/{id}: nothing creates its items (no POST /statuses that declares a success and takes one item, no PUT /statuses/{id})'])
  t.same(inferred(status), ['/statuses/{id}: statuses keyed by id (read GET, delete DELETE, create POST)'], 'one that takes an item, remembered')
})

t.test('a key in a JSON path parameter (Stream\'s GET /imports/{id}, `content: application/json`) is read back as JSON text', async (t) => {
  const item = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } }
  const json = (schema: object) => ({ content: { 'application/json': { schema } } })
  const document: any = {
    openapi: '3.0.3',
    info: { title: 'Imports', version: '1.0.0' },
    paths: {
      '/imports': { post: { requestBody: { required: true, ...json(item) }, responses: { 201: { description: 'made', ...json(item) } } } },
      '/imports/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, ...json({ type: 'string' }) }], responses: { 200: { description: 'the import', ...json(item) } } } }
    }
  }
  const { app, document: model, routes } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'imports.json')
  t.teardown(() => app.close())
  const [resource] = inferResources(model, routes).resources
  t.same(await createThenRead(model, createValidators(model, 'imports.json'), app.inject.bind(app), resource), { outcome: 'read back' })
})

t.test('a create that answers the item in a range of types (Clever Cloud\'s organisations, `*/*`), which the mock answers in JSON: its key read from it, and the item read back', async (t) => {
  const organisation = { type: 'object', required: ['name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } }
  const document: any = {
    openapi: '3.0.3',
    info: { title: 'Organisations', version: '1.0.0' },
    paths: {
      '/organisations': { post: { requestBody: { required: true, content: { 'application/json': { schema: organisation } } }, responses: { 200: { description: 'made', content: { '*/*': { schema: organisation } } } } } },
      '/organisations/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', content: { 'application/json': { schema: organisation } } } } } }
    }
  }
  const { app, document: model, routes } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'organisations.json')
  t.teardown(() => app.close())
  const [resource] = inferResources(model, routes).resources
  t.same(await createThenRead(model, createValidators(model, 'organisations.json'), app.inject.bind(app), resource), { outcome: 'read back' })
  // The verifier's chain reads what it created too: against the mock, nothing found.
  const verification = await verify(model, injectTransport(app), { seed: 1, generated: 0 })
  t.same([verification.operations.flatMap((o) => o.violations), verification.chains.requests > 2], [[], true], `a chain of ${verification.chains.requests} requests, nothing found`)
})
