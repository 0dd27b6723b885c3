import fc from 'fast-check'
import t, { type Test } from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { createValidators } from '../../src/openapi/schemas/validation.ts'
import { routeList } from '../../src/openapi/routes/routes.ts'
import { responseFor } from '../../src/openapi/answers/responses.ts'
import { MAX_COLLECTIONS, MAX_ITEMS, State } from '../../src/openapi/mock/state.ts'
import { validSample } from '../../src/openapi/schemas/samples.ts'
import { captureLog } from '../helpers/app.ts'
import { pets } from './fixtures/pets.ts'
import { shop } from './fixtures/shop.ts'

// The stateful mock (npm run mock's default) on a shop of our own: what a client writes it reads
// back, each answer still valid against the document, each item's collection its own.

/** A JSON media type of `schema`, as a request body or an answer holds it. */
const json = (schema: object) => ({ content: { 'application/json': { schema } } })

async function shopMock (t: Test, options = {}) {
  const { logStream, lines } = captureLog()
  const built = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document: structuredClone(shop) }, 'shop.json', logStream, options)
  t.teardown(() => built.app.close())
  // Every answer is checked against the document, as the verifier would.
  const validators = createValidators(built.document)
  const { routes } = routeList(built.document)
  const valid = (method: string, path: string, status: number, body: unknown) => {
    const route = routes.find((r) => r.method === method && r.path === path)!
    const media = responseFor(route.responses, status)?.media.find((m) => m.type === 'application/json')
    if (media?.schema === undefined) return true
    const validate = validators.response(media.schema)
    return validate(body) || (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join(', ')
  }
  return { ...built, lines, valid }
}

/** The stateful mock of a document of one collection: a create of `written`, answered `read` (or as `created` says), and its item's read. */
async function collectionMock (t: Test, name: string, written: object, read: object, created: object = { description: 'made', ...json(read) }) {
  const document = {
    openapi: '3.1.0',
    info: { title: name, version: '1.0.0' },
    paths: {
      [`/${name}`]: { post: { requestBody: { required: true, ...json(written) }, responses: { 201: created } } },
      [`/${name}/{id}`]: { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'it', ...json(read) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, `${name}.json`)
  t.teardown(() => app.close())
  return app
}

t.test('infers the resources of the document, and says so at start', async (t) => {
  const { remembered, lines } = await shopMock(t)
  t.same(remembered, [
    '/orders/{orderId}: orders keyed by id (read GET, replace PUT, delete DELETE, patch PATCH, create POST, list GET)',
    '/products/{sku}: products keyed by sku (read GET, replace PUT)',
    '/customers/{customerId}/addresses/{address_id}: addresses keyed by id, each {customerId} its own (read GET, create POST, list GET)',
    '/notes/{noteId}: notes keyed by id (read GET, create POST)'
  ])
  t.match(lines.find((line) => /remembers what clients write/.test(line.msg)), { resources: remembered })
})

t.test('a create answers what was written, a read reads it back, a list lists it, a patch, a PUT and a delete change it', async (t) => {
  const { app, valid } = await shopMock(t)
  const created = await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Monstera', quantity: 3, card: '4111111111111111' } })
  t.equal(created.statusCode, 201)
  const order = created.json()
  t.match(order, { item: 'Monstera', quantity: 3, status: 'placed' }, 'the request\'s values, an enum\'s first value')
  t.ok(Number.isInteger(order.id) && order.id >= 2, `a key of its own, after the example's (${order.id})`)
  t.ok(!Number.isNaN(Date.parse(order.createdAt)), 'a timestamp')
  t.notOk('card' in order, 'writeOnly: kept, never answered')
  t.equal(created.headers.location, `/orders/${order.id}`, 'Location, where the answer declares it')
  t.equal(valid('POST', '/orders', 201, order), true)

  const read = await app.inject({ url: `/orders/${order.id}` })
  t.equal(read.statusCode, 200)
  t.same(read.json(), { data: order }, 'read back, in the read\'s envelope')
  t.equal(valid('GET', '/orders/{orderId}', 200, read.json()), true)
  t.same((await app.inject({ url: '/orders/1' })).json().data.item, 'Fern', 'the collection starts from the document\'s own example')

  const second = (await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1 } })).json()
  t.not(second.id, order.id, 'two creates, two keys')
  const listed = await app.inject({ url: '/orders' })
  t.same(listed.json().items.map((o: any) => o.id), [1, order.id, second.id], 'a list holds what was created, in its envelope')
  t.equal(valid('GET', '/orders', 200, listed.json()), true)
  const limited = (await app.inject({ url: '/orders?limit=2' })).json()
  t.equal(limited.items.length, 2, 'a declared limit is honoured')
  t.equal(limited.total, 3, 'the envelope\'s total counts them all')

  const merged = await app.inject({ method: 'PATCH', url: `/orders/${order.id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { quantity: 5, note: 'by the window' } })
  t.match(merged.json(), { id: order.id, item: 'Monstera', quantity: 5, note: 'by the window', createdAt: order.createdAt }, 'a merge patch changes what it names')
  const unset = await app.inject({ method: 'PATCH', url: `/orders/${order.id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { note: null } })
  t.notOk('note' in unset.json(), 'null removes (RFC 7396)')
  const patched = await app.inject({ method: 'PATCH', url: `/orders/${order.id}`, payload: { item: 'Calathea' } })
  t.match(patched.json(), { item: 'Calathea', quantity: 5 }, 'a JSON PATCH of properties changes what it names')
  t.equal(valid('PATCH', '/orders/{orderId}', 200, patched.json()), true)

  const replaced = await app.inject({ method: 'PUT', url: `/orders/${order.id}`, payload: { item: 'Pilea', quantity: 1 } })
  t.equal(replaced.statusCode, 200)
  t.same(replaced.json(), { id: order.id, item: 'Pilea', quantity: 1, status: 'placed', createdAt: order.createdAt }, 'a PUT replaces: what it does not name is gone, the server\'s values kept')
  t.same((await app.inject({ url: `/orders/${order.id}` })).json().data, replaced.json())

  t.equal((await app.inject({ method: 'DELETE', url: `/orders/${order.id}` })).statusCode, 204)
  for (const [method, payload] of [['GET'], ['DELETE'], ['PATCH', { quantity: 2 }], ['PUT', { item: 'X', quantity: 1 }]] as const) {
    const gone = await app.inject({ method, url: `/orders/${order.id}`, payload })
    t.equal(gone.statusCode, 404, `${method} of a deleted key: the declared 404`)
    t.same(gone.json(), { code: 404, message: `No item of orders has the key ${order.id}` }, 'in the document\'s error shape')
  }
  t.same((await app.inject({ url: '/orders' })).json().items.map((o: any) => o.id), [1, second.id], 'gone from the list')
})

t.test('a writeOnly property whose name holds a slash or a tilde is kept and never answered', async (t) => {
  const account = { type: 'object', required: ['name'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' }, 'pass/word~': { type: 'string', writeOnly: true } } }
  const app = await collectionMock(t, 'accounts', account, account)
  const created = await app.inject({ method: 'POST', url: '/accounts', payload: { name: 'Ada', 'pass/word~': 'secret' } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { id: created.json().id, name: 'Ada' })
  t.same((await app.inject({ url: `/accounts/${created.json().id}` })).json(), created.json())
})

t.test('a create whose body is a single value makes an item of the server\'s values, each under a key of its own', async (t) => {
  // As CircleCI's checkout keys: POST the key's type, a JSON string; the key answered is the server's.
  const key = { type: 'object', properties: { id: { type: 'integer' }, type: { type: 'string', enum: ['deploy-key', 'user-key'] }, public_key: { type: 'string' } } }
  const app = await collectionMock(t, 'keys', { type: 'string', enum: ['deploy-key', 'user-key'] }, key)
  const made = []
  for (let i = 0; i < 2; i++) made.push((await app.inject({ method: 'POST', url: '/keys', payload: '"deploy-key"', headers: { 'content-type': 'application/json' } })).json())
  t.not(made[0].id, made[1].id, 'two keys')
  for (const one of made) t.same((await app.inject({ url: `/keys/${one.id}` })).json(), one, 'each read back')
})

t.test('a create whose answer holds no item names the one it made by its Location', async (t) => {
  // As eBay's campaigns: 201, an empty object, and the campaign's URI in the Location header.
  const campaign = { type: 'object', properties: { campaignId: { type: 'string', readOnly: true }, name: { type: 'string' } } }
  const app = await collectionMock(t, 'campaigns', campaign, campaign, { description: 'made', headers: { Location: { schema: { type: 'string' } } }, ...json({ type: 'object' }) })
  const created = await app.inject({ method: 'POST', url: '/campaigns', payload: { name: 'Spring' } })
  t.same([created.statusCode, created.json()], [201, {}])
  const read = await app.inject({ url: created.headers.location as string })
  t.same([read.statusCode, read.json().name], [200, 'Spring'], `${created.headers.location} is the campaign made`)
})

t.test('a create whose answer gives no key, and declares no Location, still names the item it made by one; one whose answer gives it, not', async (t) => {
  // As eBay's feed tasks and Clever Cloud's creates: no body; as ReadMe's upload: a status, not the item.
  const task = { type: 'object', properties: { id: { type: 'integer', readOnly: true }, feed: { type: 'string' } } }
  const status = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['queued'] } } }
  for (const [why, created] of [['no body', { description: 'made' }], ['a status', { description: 'made', ...json(status) }]] as const) {
    const app = await collectionMock(t, 'tasks', task, task, created)
    const made = await Promise.all(['orders', 'returns'].map(async (feed) => await app.inject({ method: 'POST', url: '/tasks', payload: { feed } })))
    t.same(made.map((one) => one.statusCode), [201, 201], why)
    t.not(made[0].headers.location, made[1].headers.location, `${why}: each its own Location`)
    for (const [i, feed] of ['orders', 'returns'].entries()) {
      t.match(made[i].headers.location, /^\/tasks\/\d+$/, `${why}: ${made[i].headers.location}`)
      const read = await app.inject({ url: made[i].headers.location as string })
      t.same([read.statusCode, read.json().feed], [200, feed], `${why}: ${made[i].headers.location} is the ${feed} task`)
    }
  }
  const app = await collectionMock(t, 'tasks', task, task)
  const made = await app.inject({ method: 'POST', url: '/tasks', payload: { feed: 'orders' } })
  t.same([made.statusCode, made.headers.location, typeof made.json().id], [201, undefined, 'number'], 'the item in the answer, its key with it: no Location the document does not declare')
})

t.test('a create whose answer is the key alone answers the key of the item it made', async (t) => {
  // As LUIS's POST /apps/: 201, the new app's id as a JSON value, and no Location.
  const app = await collectionMock(t, 'apps', { type: 'object', properties: { name: { type: 'string' } } }, { type: 'object', properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } } }, { description: 'its id', ...json({ type: 'integer' }) })
  const keys = []
  for (const name of ['Comics', 'Weather']) {
    const created = await app.inject({ method: 'POST', url: '/apps', payload: { name } })
    t.equal(created.statusCode, 201)
    keys.push(created.json())
    t.same((await app.inject({ url: `/apps/${created.json()}` })).json(), { id: created.json(), name }, `${created.body} is the ${name} app`)
  }
  t.not(keys[0], keys[1], 'each its own')
})

t.test('a key the read spells as one type and the create\'s answer as another is answered as the same value, spelled as asked', async (t) => {
  // As Jira's: a notification scheme's id an integer when read, a string in the create's answer; a project's, the other way round (int64).
  const written = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }
  for (const [read, answered] of [['integer', { type: 'string' }], ['string', { type: 'integer', format: 'int64' }]] as const) {
    const item = { type: 'object', properties: { id: { type: read }, name: { type: 'string' } } }
    const identifiers = { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { ...answered, readOnly: true } } }
    const app = await collectionMock(t, 'schemes', written, item, { description: 'made', ...json(identifiers) })
    const ids = []
    for (const name of ['a', 'b']) ids.push((await app.inject({ method: 'POST', url: '/schemes', payload: { name } })).json().id)
    const spelled = answered.type === 'string' ? ['1', '2'] : [1, 2]
    t.same(ids, spelled, `read as ${read}, answered as ${answered.type}`)
    t.same((await app.inject({ url: `/schemes/${ids[1]}` })).json(), { id: read === 'string' ? '2' : 2, name: 'b' })
  }
})

t.test('after an item a PUT made at 2^53 - 1, each create still gets a key of its own', async (t) => {
  // As NetBox's, whose PUT of an item not there makes it (it declares no 404): the verifier puts one at the largest exact integer.
  const port = { type: 'object', required: ['name'], properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' } } }
  const item = { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], get: { responses: { 200: { description: 'it', ...json(port) }, 404: { description: 'none' } } }, put: { requestBody: { required: true, ...json(port) }, responses: { 200: { description: 'put', ...json(port) } } } }
  const document = { openapi: '3.1.0', info: { title: 'Ports', version: '1.0.0' }, paths: { '/ports': { post: { requestBody: { required: true, ...json(port) }, responses: { 201: { description: 'made', ...json(port) } } } }, '/ports/{id}': item } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'ports.json')
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'PUT', url: `/ports/${Number.MAX_SAFE_INTEGER}`, payload: { name: 'last' } })).statusCode, 200)
  const keys = []
  for (const name of ['a', 'b']) keys.push((await app.inject({ method: 'POST', url: '/ports', payload: { name } })).json().id)
  t.same(keys, [1, 2], 'the first free keys: none past 2^53, where a double counts one key twice')
  t.same(await Promise.all([1, 2, Number.MAX_SAFE_INTEGER].map(async (key) => (await app.inject({ url: `/ports/${key}` })).json().name)), ['a', 'b', 'last'])
})

t.test('an item not there is answered 410 where its read declares that and no 404', async (t) => {
  // As Pendo's accounts: a read answers 200 or 410 (Gone); a delete answers the item deleted.
  const account = { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } }
  const item = { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], get: { responses: { 200: { description: 'it', ...json(account) }, 410: { description: 'gone' } } }, delete: { responses: { 200: { description: 'deleted', ...json(account) } } } }
  const document = { openapi: '3.1.0', info: { title: 'Accounts', version: '1.0.0' }, paths: { '/accounts': { post: { requestBody: { required: true, ...json(account) }, responses: { 201: { description: 'made', ...json(account) } } } }, '/accounts/{id}': item } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'accounts.json')
  t.teardown(() => app.close())
  const { id } = (await app.inject({ method: 'POST', url: '/accounts', payload: { id: 7, name: 'Ada' } })).json()
  t.equal((await app.inject({ method: 'DELETE', url: `/accounts/${id}` })).statusCode, 200)
  const gone = await app.inject({ url: `/accounts/${id}` })
  t.same([gone.statusCode, gone.json().detail], [410, `No item of accounts has the key ${id}`])
})

t.test('a JSON Patch (RFC 6902), in its media type or in JSON (LaunchDarkly\'s, 1Password Connect\'s), applies its operations in order, all or none; one that cannot be applied answers 409 where declared (else as before, from the document) and changes nothing; one of an item not there, 404', async (t) => {
  const note = { type: 'object', required: ['text'], properties: { id: { type: 'integer', readOnly: true }, text: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, extra: { type: 'object' }, size: { type: 'integer', format: 'int64' } } }
  const operations = { type: 'array', items: { type: 'object', required: ['op', 'path'], properties: { op: { type: 'string' }, path: { type: 'string' }, from: { type: 'string' }, value: {} } } }
  const notes = (conflict: boolean, type: string) => ({
    openapi: '3.1.0',
    info: { title: 'Notes', version: '1.0.0' },
    paths: {
      '/notes': { post: { requestBody: { required: true, ...json(note) }, responses: { 201: { description: 'made', ...json(note) } } } },
      '/notes/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: { description: 'the note', ...json(note) }, 404: { description: 'none' } } },
        patch: { requestBody: { required: true, content: { [type]: { schema: operations } } }, responses: { 200: { description: 'patched', ...json(note) }, 404: { description: 'none' }, ...(conflict && { 409: { description: 'cannot be applied' } }) } }
      }
    }
  })
  for (const [conflict, type] of [[true, 'application/json-patch+json'], [false, 'application/json-patch+json'], [true, 'application/json']] as const) {
    const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: notes(conflict, type) }, 'notes.json')
    t.teardown(() => app.close())
    const created = await app.inject({ method: 'POST', url: '/notes', headers: { 'content-type': 'application/json' }, payload: '{"text":"water","tags":["fern"],"size":9007199254740993}' })
    t.equal(created.statusCode, 201, 'an item with an int64 past 2^53 made (it was a 500: its size counted as JSON.stringify, which has no bigint)')
    const made = created.json()
    t.match((await app.inject({ url: `/notes/${made.id}` })).body, /"size":9007199254740993[,}]/, 'and read back exact')
    const patch = async (payload: unknown[], id = made.id) => await app.inject({ method: 'PATCH', url: `/notes/${id}`, headers: { 'content-type': type }, payload })
    const read = async () => (await app.inject({ url: `/notes/${made.id}` })).json()

    const applied = await patch([{ op: 'test', path: '/text', value: 'water' }, { op: 'replace', path: '/text', value: 'mist' }, { op: 'add', path: '/tags/-', value: 'palm' }, { op: 'copy', from: '/tags/0', path: '/extra' }, { op: 'remove', path: '/extra' }, { op: 'move', from: '/tags/0', path: '/tags/1' }])
    t.equal(applied.statusCode, 200)
    t.same(applied.json(), { id: made.id, text: 'mist', tags: ['palm', 'fern'], size: 9007199254740992 }, 'each operation in order: test, replace, add to a list\'s end, copy, remove, move')
    t.match(applied.body, /"size":9007199254740993[,}]/, 'an int64 past 2^53 kept exact')
    t.same(await read(), applied.json(), 'and kept')

    for (const [why, operations] of [
      ['a test that fails', [{ op: 'replace', path: '/text', value: 'lost' }, { op: 'test', path: '/text', value: 'water' }]],
      ['a path not there', [{ op: 'replace', path: '/text', value: 'lost' }, { op: 'remove', path: '/missing' }]],
      ['a path through an object\'s prototype', [{ op: 'add', path: '/__proto__/polluted', value: true }]],
      ['one that leaves no object', [{ op: 'replace', path: '', value: 7 }]],
      ['an operation RFC 6902 does not have', [{ op: 'string', path: 'string' }]]
    ] as const) {
      const refused = await patch([...operations])
      if (conflict) {
        t.equal(refused.statusCode, 409, `${why}: 409`)
        t.match(refused.json().detail, /^The patch cannot be applied to the item: /, 'saying so (in problem details: the document gives the status no body)')
      } else {
        t.equal(refused.statusCode, 200, `${why}, where no 409 is declared: the document's answer`)
        t.not(refused.json().id, made.id, 'not the item\'s')
      }
      t.same(await read(), applied.json(), 'and nothing of it kept, not even the operations before the one that failed')
    }
    t.equal(({} as any).polluted, undefined, 'no object\'s prototype touched')
    t.equal((await patch([], made.id + 1)).statusCode, 404, `${type}: an item not there, 404, whatever the patch`)
  }
})

t.test('a refused request changes nothing', async (t) => {
  const { app } = await shopMock(t)
  t.equal((await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 0 } })).statusCode, 400)
  t.equal((await app.inject({ method: 'PATCH', url: '/orders/1', payload: { quantity: 'many' } })).statusCode, 400)
  t.equal((await app.inject({ method: 'PATCH', url: '/orders/1', payload: { colour: 'green' } })).statusCode, 400)
  const listed = (await app.inject({ url: '/orders' })).json()
  t.same(listed.items.map((o: any) => [o.id, o.quantity]), [[1, 2]], 'only the document\'s example, unchanged')
})

t.test('an item created by PUT with its key in the path; nested collections, each parent\'s its own', async (t) => {
  const { app, valid } = await shopMock(t)
  t.equal((await app.inject({ url: '/products/ABC-123' })).statusCode, 404)
  const created = await app.inject({ method: 'PUT', url: '/products/ABC-123', payload: { sku: 'ABC-123', name: 'Pot' } })
  t.equal(created.statusCode, 201, 'a PUT that creates answers its declared 201')
  t.same(created.json(), { sku: 'ABC-123', name: 'Pot', price: 0 }, 'a default filled')
  const again = await app.inject({ method: 'PUT', url: '/products/ABC-123', payload: { sku: 'ABC-123', name: 'Big pot', price: 9 } })
  t.equal(again.statusCode, 200, 'one that replaces, its 200')
  t.same((await app.inject({ url: '/products/ABC-123' })).json(), { sku: 'ABC-123', name: 'Big pot', price: 9 })

  const home = (await app.inject({ method: 'POST', url: '/customers/ann/addresses', payload: { street: '1 Leaf Lane' } })).json()
  t.match(home.id, /^[0-9a-f-]{36}$/, 'a key valid as the property (uuid) and as the path\'s parameter')
  t.equal(valid('POST', '/customers/{customerId}/addresses', 201, home), true)
  t.same((await app.inject({ url: `/customers/ann/addresses/${home.id}` })).json(), home)
  t.equal((await app.inject({ url: `/customers/bob/addresses/${home.id}` })).statusCode, 404, 'another customer\'s addresses are their own')
  t.same((await app.inject({ url: '/customers/bob/addresses' })).json(), [])
  t.same((await app.inject({ url: '/customers/ann/addresses' })).json(), [home])
})

t.test('keys of a pattern of their own, drawn from it; a property named as a parent\'s path parameter, that parent\'s', async (t) => {
  const book = { type: 'object', required: ['id', 'shelfId', 'title'], properties: { id: { type: 'string', readOnly: true }, shelfId: { type: 'integer', readOnly: true }, title: { type: 'string' } } }
  const shelfId = { name: 'shelfId', in: 'path', required: true, schema: { type: 'integer' } }
  const library = {
    openapi: '3.1.0',
    info: { title: 'Library', version: '1.0.0' },
    paths: {
      '/shelves/{shelfId}/books': { parameters: [shelfId], post: { operationId: 'addBook', requestBody: { required: true, ...json(book) }, responses: { 201: { description: 'added', ...json(book) } } } },
      '/shelves/{shelfId}/books/{bookId}': {
        parameters: [shelfId, { name: 'bookId', in: 'path', required: true, schema: { type: 'string', pattern: '^bk_[a-z0-9]{8}$' } }],
        get: { operationId: 'getBook', responses: { 200: { description: 'the book', ...json(book) }, 404: { description: 'none' } } }
      }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: library }, 'library.json')
  t.teardown(() => app.close())
  const made = await Promise.all(['Dune', 'Emma'].map(async (title) => (await app.inject({ method: 'POST', url: '/shelves/7/books', payload: { title } })).json()))
  t.match(made, [{ id: /^bk_[a-z0-9]{8}$/, shelfId: 7, title: 'Dune' }, { id: /^bk_[a-z0-9]{8}$/, shelfId: 7, title: 'Emma' }], 'each key of the path parameter\'s pattern, each book its shelf\'s')
  t.not(made[0].id, made[1].id, 'two keys')
  t.same((await app.inject({ url: `/shelves/7/books/${made[0].id}` })).json(), made[0], 'read back by that key')
})

t.test('answers chosen by what is asked: the response example of the same name as the request\'s; Prefer still wins', async (t) => {
  const { app } = await shopMock(t)
  const quote = (payload: object, headers = {}) => app.inject({ method: 'POST', url: '/quotes', payload, headers })
  t.same((await quote({ crates: 48, express: false })).json(), { price: 480 }, 'a body equal to the example "bulk", keys in another order')
  t.same((await quote({ crates: 1 })).json(), { price: 12.5 }, '"one"')
  const urgent = await quote({ crates: 2, express: true })
  t.equal(urgent.statusCode, 422, 'the answer of that name, whatever its status')
  t.same(urgent.json(), { code: 422, message: 'no express delivery of crates' })
  t.same((await quote({ crates: 3 })).json(), { price: 12.5 }, 'otherwise as before: the first example')
  t.same((await quote({ crates: 48, express: false }, { prefer: 'example=one' })).json(), { price: 12.5 }, 'Prefer: example= wins')
  t.equal((await quote({ crates: 48, express: false }, { prefer: 'code=422' })).statusCode, 422, 'Prefer: code= wins')
  t.same((await app.inject({ url: '/rates/JPY' })).json(), { rate: 151.3 }, 'a parameter equal to its example "yen"')
  t.same((await app.inject({ url: '/rates/EUR' })).json(), { rate: 0.92 })
})

t.test('a body that holds an int64 past 2^53, read exactly, is compared with the named examples by its digits (portfoliooptimizer.io\'s returns were a 500)', async (t) => {
  const document = structuredClone(shop) as any
  document.paths['/quotes'].post.requestBody.content['application/json'].schema.properties.crates.format = 'int64'
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const huge = await app.inject({ method: 'POST', url: '/quotes', headers: { 'content-type': 'application/json' }, payload: '{"crates":9007199254740993}' })
  t.same([huge.statusCode, huge.json()], [200, { price: 12.5 }], 'no example of it: the first')
  t.same((await app.inject({ method: 'POST', url: '/quotes', payload: { crates: 48, express: false } })).json(), { price: 480 }, 'an example still chooses its answer')
})

t.test('reset forgets everything without a restart; --stateless answers as before', async (t) => {
  const { app } = await shopMock(t)
  const { id } = (await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1 } })).json()
  t.equal((await app.inject({ url: `/orders/${id}` })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/__mock/reset' })).statusCode, 204)
  t.equal((await app.inject({ url: `/orders/${id}` })).statusCode, 404, 'forgotten')
  t.equal((await app.inject({ url: '/orders/1' })).statusCode, 200, 'the document\'s examples again')

  const stateless = await shopMock(t, { stateless: true })
  t.same(stateless.remembered, [])
  const made = await stateless.app.inject({ method: 'POST', url: '/orders', payload: { item: 'Monstera', quantity: 3 } })
  t.equal(made.statusCode, 201)
  t.not(made.json().item, 'Monstera', 'a sample, not what was sent')
  t.same((await stateless.app.inject({ url: '/orders/77' })).json().data.id, 1, 'the example, whatever the key')
  t.equal((await stateless.app.inject({ method: 'POST', url: '/__mock/reset' })).statusCode, 404, 'nothing to reset')
})

t.test('model-based: any sequence of creates, reads, lists, patches, PUTs and deletes answers as a map would, every answer valid', async (t) => {
  type Model = Map<number, { item: string, quantity: number, note?: string }>
  type Real = { inject: Awaited<ReturnType<typeof shopMock>>['app']['inject'], valid: Awaited<ReturnType<typeof shopMock>>['valid'], ids: number[] }
  const fields = fc.record({ item: fc.string({ minLength: 1, maxLength: 8 }), quantity: fc.integer({ min: 1, max: 99 }) })
  const pick = fc.nat(20)
  // Which order a command names: one of those made (by its index, modulo), or one never made.
  const target = (real: Real, which: number) => which === 20 || real.ids.length === 0 ? 9999 : real.ids[which % real.ids.length]
  const expectItem = (t: Test, answer: any, model: Model, id: number, label: string) => {
    const want = model.get(id)
    if (want === undefined) return t.equal(answer.statusCode, 404, `${label} ${id}: 404`)
    t.equal(answer.statusCode, 200, `${label} ${id}: 200`)
    const got = answer.json().data ?? answer.json()
    t.same({ item: got.item, quantity: got.quantity, note: got.note }, { note: undefined, ...want }, `${label} ${id}: as written`)
  }
  /** A command of fast-check's model run: what it does to the mock, and what the model expects. */
  const command = (name: string, run: (model: Model, real: Real) => Promise<void>): fc.AsyncCommand<Model, Real> => ({ check: () => true, run, toString: () => name })
  const create = (fields: { item: string, quantity: number }) => command(`create ${JSON.stringify(fields)}`, async (model, real) => {
    const answer = await real.inject({ method: 'POST', url: '/orders', payload: fields })
    t.equal(answer.statusCode, 201)
    t.equal(real.valid('POST', '/orders', 201, answer.json()), true, 'create: valid')
    const id = answer.json().id
    t.notOk(model.has(id), `create: a new key (${id})`)
    model.set(id, { ...fields })
    real.ids.push(id)
  })
  const read = (which: number) => command(`read #${which}`, async (model, real) => {
    const id = target(real, which)
    const answer = await real.inject({ url: `/orders/${id}` })
    if (answer.statusCode === 200) t.equal(real.valid('GET', '/orders/{orderId}', 200, answer.json()), true, 'read: valid')
    expectItem(t, answer, model, id, 'read')
  })
  const list = () => command('list', async (model, real) => {
    const answer = await real.inject({ url: '/orders' })
    t.equal(real.valid('GET', '/orders', 200, answer.json()), true, 'list: valid')
    t.same(answer.json().items.map((o: any) => o.id), [...model.keys()], 'list: what was created, oldest written first')
  })
  // A changed item is written anew: it moves to the end of the list.
  const rewrite = (model: Model, id: number, next: { item: string, quantity: number, note?: string }) => { model.delete(id); model.set(id, next) }
  const patch = (which: number, change: { quantity?: number, note?: string | null }) => command(`patch #${which} ${JSON.stringify(change)}`, async (model, real) => {
    const id = target(real, which)
    const answer = await real.inject({ method: 'PATCH', url: `/orders/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: change })
    const old = model.get(id)
    if (old !== undefined) {
      const next: { item: string, quantity: number, note?: string } = { ...old, ...change.quantity === undefined ? {} : { quantity: change.quantity } }
      if (change.note === null) delete next.note
      else if (change.note !== undefined) next.note = change.note
      rewrite(model, id, next)
      t.equal(real.valid('PATCH', '/orders/{orderId}', 200, answer.json()), true, 'patch: valid')
    }
    expectItem(t, answer, model, id, 'patch')
  })
  const replace = (which: number, fields: { item: string, quantity: number }) => command(`put #${which} ${JSON.stringify(fields)}`, async (model, real) => {
    const id = target(real, which)
    const answer = await real.inject({ method: 'PUT', url: `/orders/${id}`, payload: fields })
    if (model.has(id)) rewrite(model, id, { ...fields })
    expectItem(t, answer, model, id, 'put')
  })
  const remove = (which: number) => command(`delete #${which}`, async (model, real) => {
    const id = target(real, which)
    const answer = await real.inject({ method: 'DELETE', url: `/orders/${id}` })
    t.equal(answer.statusCode, model.delete(id) ? 204 : 404, `delete ${id}`)
  })
  const commands = [
    fields.map(create),
    pick.map(read),
    fc.constant(null).map(list),
    fc.tuple(pick, fc.record({ quantity: fc.integer({ min: 1, max: 99 }), note: fc.string({ maxLength: 8 }) }, { requiredKeys: [] })).map(([w, c]) => patch(w, c)),
    fc.tuple(pick, fc.record({ note: fc.constant(null) })).map(([w, c]) => patch(w, c)),
    fc.tuple(pick, fields).map(([w, f]) => replace(w, f)),
    pick.map(remove)
  ]
  const { app, valid } = await shopMock(t)
  await fc.assert(fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (cmds) => {
    await app.inject({ method: 'POST', url: '/__mock/reset' })
    // The document's example is there from the start: the model starts from it too.
    const model: Model = new Map([[1, { item: 'Fern', quantity: 2 }]])
    await fc.asyncModelRun(() => ({ model, real: { inject: app.inject.bind(app), valid, ids: [1] } }), cmds)
  }), { numRuns: 25, seed: 7 })
})

t.test('bounded: a collection keeps its newest 1,000 items, the state its newest 64 MiB, and 10,000 collections', async (t) => {
  const { app } = await shopMock(t)
  const ids: number[] = []
  for (let i = 0; i < MAX_ITEMS + 100; i++) ids.push((await app.inject({ method: 'POST', url: '/orders', payload: { item: `Fern ${i}`, quantity: 1 } })).json().id)
  const listed = (await app.inject({ url: '/orders?limit=100' })).json().items
  t.equal(listed[0].id, ids[100], 'the oldest dropped first: the list starts at the 101st')
  t.equal((await app.inject({ url: `/orders/${ids[99]}` })).statusCode, 404, 'dropped')
  t.equal((await app.inject({ url: `/orders/${ids.at(-1)}` })).statusCode, 200, 'the newest kept')

  const state = new State({ maxBytes: 10_000 })
  const items = state.collection('things', () => [])
  for (let i = 0; i < 1000; i++) state.put('things', items, String(i), { id: i, text: 'x'.repeat(100) })
  t.ok(state.size().bytes <= 10_000, `bytes held within the bound (${state.size().bytes})`)
  t.equal(items.has('999'), true)
  t.equal(items.has('0'), false)
  const nested = new State()
  for (let i = 0; i <= MAX_COLLECTIONS; i++) nested.collection(`parent ${i}`, () => [['1', { id: 1 }]])
  t.equal(nested.size().collections, MAX_COLLECTIONS, 'collections bounded, the oldest made dropped with its items')
  t.equal(nested.size().items, MAX_COLLECTIONS, 'each with its one item')
})

t.test('a body of file parts is kept as data: the bytes of a part as its text', async (t) => {
  const state = new State()
  const items = state.collection('uploads', () => [])
  const kept = state.put('uploads', items, '1', { id: 1, file: Buffer.from('hello'), nested: { list: [Buffer.from('a')] } })
  t.same(kept.value, { id: 1, file: 'hello', nested: { list: ['a'] } })
  t.ok(Object.isFrozen(kept.value) && Object.isFrozen(kept.value.nested), 'frozen: a change writes a new item')
})

t.test('concurrent requests never see half a change', async (t) => {
  const { app } = await shopMock(t)
  const { id } = (await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1, note: '1' } })).json()
  // Each patch writes two properties that agree; every answer, read or patch, must find them agreeing.
  const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => i % 3 === 0
    ? app.inject({ method: 'PATCH', url: `/orders/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: { quantity: i + 1, note: String(i + 1) } })
    : app.inject({ url: `/orders/${id}` })))
  const seen = answers.map((answer) => answer.json().data ?? answer.json())
  t.equal(seen.filter((order) => order.note !== String(order.quantity)).length, 0, `${seen.length} answers, each with a whole change`)
  t.ok(new Set(seen.map((order) => order.quantity)).size > 10, 'while the item changed under them')
})

t.test('a key not there, where the read declares no 404: answered as before; Prefer still wins over what is remembered', async (t) => {
  const { app } = await shopMock(t)
  const note = (await app.inject({ method: 'POST', url: '/notes', payload: { text: 'repot the monstera' } })).json()
  t.same((await app.inject({ url: `/notes/${note.id}` })).json(), note, 'remembered')
  const unknown = await app.inject({ url: '/notes/999' })
  t.equal(unknown.statusCode, 200, 'no 404 declared: the document\'s answer')
  t.same(unknown.json(), { id: 7, text: 'water the fern' })
  const { id } = (await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1 } })).json()
  t.equal((await app.inject({ url: `/orders/${id}`, headers: { prefer: 'code=404' } })).statusCode, 404, 'Prefer: code=404 on a remembered order')
  t.same((await app.inject({ url: `/orders/${id}`, headers: { prefer: 'example=first' } })).json().data.item, 'Fern', 'Prefer: example=first')
  t.equal((await app.inject({ url: `/orders/${id}`, headers: { prefer: 'example=first' } })).json().data.id, 1, 'the example, not the order')
})

t.test('an item asked for in XML is answered from the document; in JSON, remembered', async (t) => {
  const document = structuredClone(shop) as any
  document.paths['/notes/{noteId}'].get.responses[200].content['application/xml'] = { schema: { $ref: '#/components/schemas/Note' }, example: { id: 7, text: 'water the fern' } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const { id } = (await app.inject({ method: 'POST', url: '/notes', payload: { text: 'repot' } })).json()
  const xml = await app.inject({ url: `/notes/${id}`, headers: { accept: 'application/xml' } })
  t.match(xml.headers['content-type'], /^application\/xml/)
  t.match(xml.body, /<text>water the fern<\/text>/, 'the document\'s example, in XML')
  t.same((await app.inject({ url: `/notes/${id}`, headers: { accept: 'application/json' } })).json(), { id, text: 'repot' })
})

t.test('an example named default pairs nothing: converters give that name to lone examples', async (t) => {
  const document = structuredClone(shop) as any
  document.paths['/rates/{currency}'].get.parameters[0].examples.default = { value: 'GBP' }
  document.paths['/rates/{currency}'].get.responses[400] = { description: 'bad', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: { default: { value: { code: 400, message: 'no such currency' } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const gbp = await app.inject({ url: '/rates/GBP' })
  t.equal(gbp.statusCode, 200, 'not the 400 whose example is also named default')
  t.same((await app.inject({ url: '/rates/JPY' })).json(), { rate: 151.3 }, 'a name that pairs still does')
})

t.test('a value that examples of several names share chooses none of them: every request carries the one version allowed', async (t) => {
  const document = structuredClone(shop) as any
  const rate = document.paths['/rates/{currency}'].get
  rate.parameters[0].examples.unknown = { value: 'XXX' }
  rate.parameters.push({ name: 'version', in: 'query', required: true, schema: { type: 'string', enum: ['2'] }, examples: { euro: { value: '2' }, yen: { value: '2' }, unknown: { value: '2' } } })
  rate.responses[404] = { description: 'no such currency', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: { unknown: { value: { code: 404, message: 'no such currency' } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const gbp = await app.inject({ url: '/rates/GBP?version=2' })
  t.equal(gbp.statusCode, 200, 'not the 404 whose example\'s name the version also has')
  t.same(gbp.json(), { rate: 0.92 }, 'the first example, as for any request no example names')
  t.equal((await app.inject({ url: '/rates/XXX?version=2' })).statusCode, 404, 'a value of one name still chooses its answer')
  t.same((await app.inject({ url: '/rates/JPY?version=2' })).json(), { rate: 151.3 })
})

t.test('names that pair only with errors choose nothing: a converter named the one example it found for the only answer with a body', async (t) => {
  const document = structuredClone(shop) as any
  const rate = document.paths['/rates/{currency}'].get
  // As Azure's advisor: the create's example, whose 204 has no body, is named for its 400's.
  rate.parameters[0].examples = { PutRate: { value: 'XXX' } }
  rate.responses[400] = { description: 'bad', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: { PutRate: { value: { code: 400, message: 'improper scope' } } } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const xxx = await app.inject({ url: '/rates/XXX' })
  t.equal(xxx.statusCode, 200, 'the success, not the 400 of the same name')
  t.same(xxx.json(), { rate: 0.92 })
})

t.test('what a part of an allOf requires, another declaring it, is kept as what the part itself requires is: a time, the time it was made', async (t) => {
  // A read schema made of the write schema and a part that requires what the server sets, as many descriptions compose theirs.
  const task = { allOf: [{ $ref: '#/components/schemas/NewTask' }, { required: ['id', 'status', 'updated'], properties: { id: { type: 'integer', readOnly: true } } }] }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Tasks', version: '1.0.0' },
    components: { schemas: { NewTask: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, status: { type: 'string', enum: ['open', 'done'] }, updated: { type: 'string', format: 'date-time' } } } } },
    paths: {
      '/tasks': { post: { operationId: 'addTask', requestBody: { required: true, ...json({ $ref: '#/components/schemas/NewTask' }) }, responses: { 201: { description: 'added', ...json(task) } } } },
      '/tasks/{id}': { get: { operationId: 'getTask', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'the task', ...json(task) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'tasks.json')
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/tasks', payload: { title: 'water the fern' } })
  t.equal(made.statusCode, 201)
  t.match(made.json(), { id: Number, title: 'water the fern', status: 'open' }, 'the status a part requires, filled')
  t.ok(Math.abs(Date.parse(made.json().updated) - Date.now()) < 60_000, `updated when it was made, not a sample's time (${made.json().updated})`)
  t.same((await app.inject({ url: `/tasks/${made.json().id}` })).json(), made.json(), 'read back')
})

t.test('an update POSTed to the item path, as Stripe\'s are, merged into what is kept; where the path has a PATCH, that one', async (t) => {
  const form = (schema: object) => ({ content: { 'application/x-www-form-urlencoded': { schema } } })
  const fields = { type: 'object', properties: { email: { type: 'string' }, name: { type: 'string' } } }
  const customer = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } } }
  const customers = (patch: boolean) => ({
    openapi: '3.0.3',
    info: { title: 'Customers', version: '1.0.0' },
    paths: {
      '/customers': { post: { operationId: 'addCustomer', requestBody: form(fields), responses: { 200: { description: 'made', ...json(customer) } } } },
      '/customers/{customer}': {
        parameters: [{ name: 'customer', in: 'path', required: true, schema: { type: 'string' } }],
        get: { operationId: 'getCustomer', responses: { 200: { description: 'it', ...json(customer) }, 404: { description: 'none' } } },
        post: { operationId: 'updateCustomer', requestBody: form(fields), responses: { 200: { description: 'updated', ...json(customer) }, 404: { description: 'none' } } },
        ...patch && { patch: { operationId: 'patchCustomer', requestBody: json(fields), responses: { 200: { description: 'patched', ...json(customer) } } } }
      }
    }
  })
  const { app, remembered } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: customers(false) }, 'customers.json')
  t.teardown(() => app.close())
  t.same(remembered, ['/customers/{customer}: customers keyed by id (read GET, patch POST, create POST)'], 'said at start')
  const made = (await app.inject({ method: 'POST', url: '/customers', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a%40example.com&name=Ada' })).json()
  const updated = await app.inject({ method: 'POST', url: `/customers/${made.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=b%40example.com' })
  t.same(updated.json(), { id: made.id, email: 'b@example.com', name: 'Ada' }, 'the email changed, the name kept')
  t.same((await app.inject({ url: `/customers/${made.id}` })).json(), updated.json(), 'read back')
  const both = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: customers(true) }, 'customers.json')
  t.teardown(() => both.app.close())
  const { inferResources } = await import('../../src/openapi/routes/resources.ts')
  t.equal(inferResources(both.document, both.routes).resources[0]?.operations.patch?.method, 'PATCH', 'with a PATCH beside it, the POST is not the update')
})

t.test('a PUT to the collection that names the item by the key in its body (the Petstore\'s PUT /pet): replaces it; a key not there answered its 404, nothing made', async (t) => {
  const { app, remembered } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document: structuredClone(pets) }, 'pets.json')
  t.teardown(() => app.close())
  t.same(remembered, ['/pet/{petId}: pet keyed by id (read GET, delete DELETE, create POST, replace PUT /pet)'], 'said at start, with the path the replace takes')
  const made = (await app.inject({ method: 'POST', url: '/pet', payload: { name: 'Rex', photoUrls: [], status: 'available' } })).json()
  const replaced = await app.inject({ method: 'PUT', url: '/pet', payload: { id: made.id, name: 'Max', photoUrls: ['a.png'] } })
  t.same(replaced.json(), { id: made.id, name: 'Max', photoUrls: ['a.png'] }, 'replaced: the status it left out, gone')
  t.same((await app.inject({ url: `/pet/${made.id}` })).json(), replaced.json(), 'read back')
  const other = await app.inject({ method: 'PUT', url: '/pet', payload: { id: made.id + 1, name: 'Nobody', photoUrls: [] } })
  t.equal(other.statusCode, 404, 'a pet not there: its 404')
  t.equal((await app.inject({ url: `/pet/${made.id + 1}` })).statusCode, 404, 'and not made')
})

t.test('what a read requires and a write did not send, in a list\'s items past the sample\'s, is filled as in the sample\'s first: the rest as written', async (t) => {
  const written = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' }, packages: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, ecosystem: { type: 'string' } } } } } }
  // As GitHub's security advisories: the read requires each package's name, the write does not.
  const read = { type: 'object', required: ['id', 'summary', 'packages'], properties: { id: { type: 'integer' }, summary: { type: 'string' }, packages: { type: 'array', items: { type: 'object', required: ['name', 'ecosystem'], properties: { name: { type: 'string' }, ecosystem: { type: 'string' } } } } } }
  const app = await collectionMock(t, 'advisories', written, read)
  const made = (await app.inject({ method: 'POST', url: '/advisories', payload: { summary: 'a flaw', packages: [{ ecosystem: 'npm' }, { ecosystem: 'go' }] } })).json()
  t.same(made, { id: made.id, summary: 'a flaw', packages: [{ ecosystem: 'npm', name: 'string' }, { ecosystem: 'go', name: 'string' }] }, 'as written, each package\'s name the sample\'s')
  t.same((await app.inject({ url: `/advisories/${made.id}` })).json(), made, 'read back')
})

t.test('a create that takes no body makes an item of the server\'s values alone', async (t) => {
  const document = structuredClone(shop) as any
  document.paths['/tokens'] = { post: { responses: { 201: { description: 'made', content: { 'application/json': { schema: { $ref: '#/components/schemas/Token' } } } } } } }
  document.paths['/tokens/{token}'] = { get: { parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'a token', content: { 'application/json': { schema: { $ref: '#/components/schemas/Token' } } } }, 404: { description: 'none' } } } }
  document.components.schemas.Token = { type: 'object', properties: { token: { type: 'string' }, created_at: { type: 'string' } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const first = (await app.inject({ method: 'POST', url: '/tokens' })).json()
  const second = (await app.inject({ method: 'POST', url: '/tokens' })).json()
  t.not(first.token, second.token, `two keys (${first.token}, ${second.token})`)
  t.same((await app.inject({ url: `/tokens/${second.token}` })).json(), second, 'read back')
})

t.test('a create whose optional body is not sent makes an item of the server\'s values alone, under a key of its own', async (t) => {
  // As Stripe's coupons: every field optional, the id the client's choice or the server's.
  const document = structuredClone(shop) as any
  const coupon = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Coupon' } } } }
  document.paths['/coupons'] = { post: { requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } } } } }, responses: { 200: { description: 'made', ...coupon } } } }
  document.paths['/coupons/{coupon}'] = { get: { parameters: [{ name: 'coupon', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'a coupon', ...coupon }, 404: { description: 'none' } } } }
  document.components.schemas.Coupon = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const named = (await app.inject({ method: 'POST', url: '/coupons', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'id=string&name=spring' })).json()
  t.same(named, { id: 'string', name: 'spring' }, 'the client\'s key, the sample\'s own')
  const made = await app.inject({ method: 'POST', url: '/coupons' })
  t.equal(made.statusCode, 200)
  t.not(made.json().id, 'string', `a key of its own (${made.json().id}), not the sample's, which one item has already`)
  t.same((await app.inject({ url: `/coupons/${made.json().id}` })).json(), made.json(), 'read back')
  t.same((await app.inject({ url: '/coupons/string' })).json(), named, 'and the first kept')
})

t.test('a create of a value no object, which a schema of no type takes (PeerTube\'s users, sent []): an item of the server\'s values alone, each under a key of its own', async (t) => {
  const app = await collectionMock(t, 'users', { properties: { name: { type: 'string' } } }, { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } })
  const [first, second] = await Promise.all([1, 2].map(async () => (await app.inject({ method: 'POST', url: '/users', payload: [] })).json()))
  t.not(first.id, second.id, `two keys (${first.id}, ${second.id})`)
  t.same((await app.inject({ url: `/users/${second.id}` })).json(), second, 'read back')
})

t.test('a key of a pattern and an exact length (QLDB\'s ExportId: 22 characters): each create a key of its own, valid', async (t) => {
  const exportId = { type: 'string', pattern: '^[A-Za-z-0-9]+$', minLength: 22, maxLength: 22 }
  const item = { type: 'object', required: ['ExportId'], properties: { ExportId: exportId, bucket: { type: 'string' } } }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Exports', version: '1.0.0' },
    paths: {
      '/exports': { post: { requestBody: { required: true, ...json({ type: 'object', properties: { bucket: { type: 'string' } } }) }, responses: { 200: { description: 'made', ...json(item) } } } },
      '/exports/{exportId}': { get: { parameters: [{ name: 'exportId', in: 'path', required: true, schema: exportId }], responses: { 200: { description: 'it', ...json(item) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'exports.json')
  t.teardown(() => app.close())
  const keys = []
  for (let i = 0; i < 3; i++) keys.push((await app.inject({ method: 'POST', url: '/exports', payload: { bucket: 'b' } })).json().ExportId)
  t.equal(new Set(keys).size, 3, `three keys: ${keys.join(', ')}`)
  t.ok(keys.every((key) => /^[A-Za-z-0-9]{22}$/.test(key)), 'each of the pattern and length')
})

t.test('a PUT that takes no body, or one that is no object (OPA\'s policy module, text/plain), makes an item under its path\'s key, of the server\'s values alone', async (t) => {
  const document = structuredClone(shop) as any
  // A bookmark, as BritBox's description has them: PUT and GET of the item path, nothing in the body.
  const itemId = { name: 'itemId', in: 'path', required: true, schema: { type: 'string' } }
  const bookmark = { 'application/json': { schema: { $ref: '#/components/schemas/Bookmark' } } }
  document.paths['/bookmarks/{itemId}'] = {
    put: { parameters: [itemId], responses: { 200: { description: 'kept', content: bookmark } } },
    get: { parameters: [itemId], responses: { 200: { description: 'a bookmark', content: bookmark }, 404: { description: 'none' } } }
  }
  // The same of a body in text: a policy module, read back as what the server keeps of it.
  document.paths['/policies/{itemId}'] = {
    put: { parameters: [itemId], requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string' } } } }, responses: { 200: { description: 'kept', content: bookmark } } },
    get: document.paths['/bookmarks/{itemId}'].get
  }
  document.components.schemas.Bookmark = { type: 'object', required: ['itemId'], properties: { itemId: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  for (const [path, payload] of [['/bookmarks', undefined], ['/policies', 'package opa.examples']]) {
    t.equal((await app.inject({ url: `${path}/film-7` })).statusCode, 404, `${path}: not there before`)
    const kept = await app.inject({ method: 'PUT', url: `${path}/film-7`, ...payload !== undefined && { headers: { 'content-type': 'text/plain' }, payload } })
    t.equal(kept.statusCode, 200)
    t.equal(kept.json().itemId, 'film-7', 'the key the path gave')
    t.same((await app.inject({ url: `${path}/film-7` })).json(), kept.json(), 'read back')
    t.equal((await app.inject({ url: `${path}/film-8` })).statusCode, 404, 'and no other')
  }
})

t.test('under the base path of the document\'s server, as a client made from it sends: routed as the document\'s paths, its Location under it', async (t) => {
  const document = { ...structuredClone(shop), servers: [{ url: 'https://shop.example/{version}', variables: { version: { default: 'v2' } } }] } as any
  document.paths['/orders'].post.responses[201].headers.Location.schema.format = 'uri'
  const { logStream, lines } = captureLog()
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'info' }), { text: '', document }, 'shop.json', logStream)
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/v2/orders', headers: { host: 'mock.test:4010' }, payload: { item: 'Monstera', quantity: 3 } })
  t.equal(created.statusCode, 201)
  const { id } = created.json()
  t.equal(created.headers.location, `http://mock.test:4010/v2/orders/${id}`, 'the new item, under the base path it was created by')
  t.equal((await app.inject({ url: `/v2/orders/${id}?fields=all` })).json().data.item, 'Monstera', 'read back under it')
  t.equal((await app.inject({ url: `/orders/${id}` })).json().data.item, 'Monstera', 'and at the document\'s own path')
  t.equal((await app.inject({ method: 'POST', url: '/orders', headers: { host: 'mock.test:4010' }, payload: { item: 'Fern', quantity: 1 } })).headers.location, `http://mock.test:4010/orders/${id + 1}`, 'a Location as the client asked, without it')
  t.equal((await app.inject({ method: 'POST', url: '/v2/orders', payload: { item: 'Fern' } })).statusCode, 400, 'validated as at the document\'s path')
  for (const url of ['/v2', '/v2x/orders', '/v3/orders']) {
    const missing = await app.inject({ url })
    t.same([missing.statusCode, missing.json().message], [404, `Route GET ${url} not found`], `${url}: not the document's, named as sent`)
  }
  t.match(lines.filter((line) => line.url !== undefined).map((line) => line.url), ['/v2/orders', `/v2/orders/${id}?fields=all`], 'the access log says what was sent')
})

t.test('a server whose base path begins a path of the document is part of that path: nothing taken off', async (t) => {
  const document = { ...structuredClone(shop), servers: [{ url: '/orders' }] } as any
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Monstera', quantity: 3 } })).statusCode, 201)
  t.equal((await app.inject({ url: '/orders/orders' })).statusCode, 400, 'the item path, its key not an integer')
})

t.test('a list follows the pages its query asks, by offset, page number or cursor, and its envelope says truly what follows: a client that pages on gets each item once, and stops', async (t) => {
  const styles = {
    // Stripe's: a cursor that names the last item seen, and a flag of more.
    stripe: { query: { limit: { type: 'integer', default: 10 }, starting_after: { type: 'string' } }, envelope: { object: { type: 'string', enum: ['list'] }, has_more: { type: 'boolean' } }, required: ['object', 'has_more'] },
    // Django REST framework's: page numbers, and the next page's URL, null at the last.
    drf: { query: { page: { type: 'integer', minimum: 1 }, page_size: { type: 'integer' } }, envelope: { count: { type: 'integer' }, next: { type: 'string', format: 'uri', nullable: true }, previous: { type: 'string', nullable: true } }, required: ['count', 'next'] },
    // Google's: a page token, and the next one, left out at the last.
    google: { query: { maxResults: { type: 'integer' }, pageToken: { type: 'string' } }, envelope: { nextPageToken: { type: 'string' } }, required: [] },
    // An offset, and a link to the next page.
    offset: { query: { offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer' } }, envelope: { next_link: { type: 'string', nullable: true } }, required: [] }
  }
  for (const [style, { query, envelope, required }] of Object.entries(styles)) {
    const document = {
      openapi: '3.0.3',
      info: { title: style, version: '1' },
      paths: {
        '/tags': {
          post: { requestBody: { required: true, ...json({ $ref: '#/components/schemas/Tag' }) }, responses: { 201: { description: 'made', ...json({ $ref: '#/components/schemas/Tag' }) } } },
          get: {
            parameters: Object.entries(query).map(([name, schema]) => ({ name, in: 'query', schema })),
            responses: { 200: { description: 'a page', ...json({ type: 'object', required: ['data', ...required], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Tag' } }, ...envelope } }) } }
          }
        },
        '/tags/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'a tag', ...json({ $ref: '#/components/schemas/Tag' }) } } } }
      },
      components: { schemas: { Tag: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } } } }
    }
    const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, `${style}.json`)
    t.teardown(() => app.close())
    const made: string[] = []
    for (let i = 0; i < 7; i++) made.push((await app.inject({ method: 'POST', url: '/tags', payload: { name: `tag ${i}` } })).json().id)
    const [size, start] = Object.keys(query).sort((a, b) => ['limit', 'page_size', 'maxResults'].includes(a) ? -1 : ['limit', 'page_size', 'maxResults'].includes(b) ? 1 : 0)
    const seen: string[] = []
    const pages: number[] = []
    let url: string | undefined = `/tags?${size}=3`
    for (let page = 0; url !== undefined && page < 5; page++) {
      const answer: { statusCode: number, json: () => any } = await app.inject({ url, headers: { host: 'mock.test' } })
      t.equal(answer.statusCode, 200, `${style}: ${url}`)
      const body: any = answer.json()
      seen.push(...body.data.map((tag: any) => tag.id))
      pages.push(body.data.length)
      const next: string | undefined = { stripe: body.has_more === true ? `/tags?${size}=3&${start}=${body.data.at(-1).id}` : undefined, drf: body.next ?? undefined, google: body.nextPageToken === undefined ? undefined : `/tags?${size}=3&${start}=${body.nextPageToken}`, offset: body.next_link ?? undefined }[style]
      url = next?.replace('http://mock.test', '')
      if (style === 'drf' && next !== undefined) t.match(next, /^http:\/\/mock\.test\/tags\?/, 'drf: an absolute URL, its format being uri')
      if (url === undefined) t.same({ stripe: body.has_more, drf: body.next, google: 'nextPageToken' in body, offset: body.next_link }[style], { stripe: false, drf: null, google: false, offset: null }[style], `${style}: the last page says so`)
    }
    t.same(pages, [3, 3, 1], `${style}: three pages`)
    t.same(seen, made, `${style}: each item once, in order`)
  }
})

t.test('a page size the query leaves out is its default; a cursor that names no item begins an empty page', async (t) => {
  const document = structuredClone(shop) as any
  document.paths['/orders'].get.parameters = [{ name: 'limit', in: 'query', schema: { type: 'integer', default: 2 } }, { name: 'cursor', in: 'query', schema: { type: 'string' } }]
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/orders', payload: { item: `Fern ${i}`, quantity: 1 } })
  const first = (await app.inject({ url: '/orders' })).json()
  t.same([first.items.length, first.total], [2, 4], 'two, of the four there are (the example\'s among them)')
  t.same((await app.inject({ url: '/orders?cursor=999' })).json().items, [], 'after nothing the mock gave')
  // A time is a filter, which the mock does not apply, not a cursor.
  document.paths['/orders'].get.parameters[1] = { name: 'after', in: 'query', schema: { type: 'string', format: 'date-time' } }
  const { app: filtered } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => filtered.close())
  t.same((await filtered.inject({ url: '/orders?after=2026-01-01T00:00:00Z' })).json().items.length, 1, 'after a time: the first page, as without it')
  // Page numbers and no size: the first page holds them all.
  document.paths['/orders'].get.parameters = [{ name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } }]
  const { app: numbered } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => numbered.close())
  await numbered.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1 } })
  t.same([(await numbered.inject({ url: '/orders?page=1' })).json().items.length, (await numbered.inject({ url: '/orders?page=2' })).json().items.length], [2, 0], 'page 1 all, page 2 none')
})

t.test('an item a PUT keeps under the path\'s key alone, holding no key of its own: remembered, each parent\'s apart', async (t) => {
  const document = structuredClone(shop) as any
  const task = { type: 'object', required: ['title'], properties: { title: { type: 'string' }, position: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'integer' }], items: false } } }
  document.paths['/boards/{board}/tasks/{taskKey}'] = {
    parameters: [{ name: 'board', in: 'path', required: true, schema: { type: 'string' } }, { name: 'taskKey', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]+$' } }],
    put: { requestBody: { required: true, ...json(task) }, responses: { 200: { description: 'replaced', ...json(task) }, 201: { description: 'made', ...json(task) } } },
    get: { responses: { 200: { description: 'a task', ...json(task) }, 404: { description: 'none', ...json({ $ref: '#/components/schemas/Error' }) } } },
    delete: { responses: { 204: { description: 'gone' }, 404: { description: 'none', ...json({ $ref: '#/components/schemas/Error' }) } } }
  }
  const { app, remembered } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  t.match(remembered, ['/orders/{orderId}: orders keyed by id (read GET, replace PUT, delete DELETE, patch PATCH, create POST, list GET)', String, String, String, '/boards/{board}/tasks/{taskKey}: tasks keyed by the path\'s {taskKey}, each {board} its own (read GET, replace PUT, delete DELETE)'], 'said at start')
  t.equal((await app.inject({ url: '/boards/a/tasks/tidy' })).statusCode, 404, 'not there before')
  const made = await app.inject({ method: 'PUT', url: '/boards/a/tasks/tidy', payload: { title: 'Tidy', position: [3, 4] } })
  t.same([made.statusCode, made.json()], [201, { title: 'Tidy', position: [3, 4] }], 'made: 201, as written, no key added')
  const replaced = await app.inject({ method: 'PUT', url: '/boards/a/tasks/tidy', payload: { title: 'Tidy up' } })
  t.same([replaced.statusCode, replaced.json()], [200, { title: 'Tidy up' }], 'replaced: 200, what it leaves out gone')
  t.same((await app.inject({ url: '/boards/a/tasks/tidy' })).json(), { title: 'Tidy up' }, 'read back')
  t.equal((await app.inject({ url: '/boards/b/tasks/tidy' })).statusCode, 404, 'another board\'s its own')
  t.equal((await app.inject({ method: 'DELETE', url: '/boards/a/tasks/tidy' })).statusCode, 204)
  t.equal((await app.inject({ url: '/boards/a/tasks/tidy' })).statusCode, 404, 'gone')
})

t.test('an item\'s entity tag, where its answers declare an ETag: a change that names another is refused 412, a read that names it answered 304, where each is declared', async (t) => {
  const document = structuredClone(shop) as any
  const orders = document.paths['/orders/{orderId}']
  const etag = { ETag: { schema: { type: 'string' } } }
  orders.get.responses[200].headers = etag
  orders.get.responses[304] = { description: 'not changed', headers: etag }
  orders.patch.responses[200].headers = etag
  orders.patch.responses[412] = { description: 'changed since', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'shop.json')
  t.teardown(() => app.close())
  const { id } = (await app.inject({ method: 'POST', url: '/orders', payload: { item: 'Fern', quantity: 1 } })).json()
  const read = await app.inject({ url: `/orders/${id}` })
  const tag = read.headers.etag as string
  t.match(tag, /^"[A-Za-z0-9_-]{22}"$/, 'a strong entity tag, quoted')
  t.equal((await app.inject({ url: `/orders/${id}` })).headers.etag, tag, 'the same while the item is')
  const unchanged = await app.inject({ url: `/orders/${id}`, headers: { 'if-none-match': `"other", ${tag}` } })
  t.same([unchanged.statusCode, unchanged.body, unchanged.headers.etag], [304, '', tag], 'If-None-Match naming it: 304, no body')
  t.equal((await app.inject({ url: `/orders/${id}`, headers: { 'if-none-match': '"other"' } })).statusCode, 200, 'naming another: the item')
  const patch = (ifMatch: string, quantity: number) => app.inject({ method: 'PATCH', url: `/orders/${id}`, headers: { 'content-type': 'application/merge-patch+json', 'if-match': ifMatch }, payload: { quantity } })
  const changed = await patch(tag, 2)
  t.equal(changed.statusCode, 200, 'If-Match naming it: changed')
  t.not(changed.headers.etag, tag, 'a new tag')
  const stale = await patch(tag, 3)
  t.same([stale.statusCode, stale.json().code], [412, 412], 'If-Match naming the tag before: 412, in the document\'s error shape')
  t.equal((await app.inject({ url: `/orders/${id}` })).json().data.quantity, 2, 'and nothing changed')
  t.equal((await patch('*', 4)).statusCode, 200, '* names any')
  t.equal((await app.inject({ method: 'DELETE', url: `/orders/${id}`, headers: { 'if-match': '"stale"' } })).statusCode, 204, 'a change that declares no 412: the condition is not the mock\'s to judge')
})

t.test('a create under a collection that ends with a slash (Django REST framework\'s /shelves/): its Location is the item\'s own path, /shelves/1/', async (t) => {
  const shelf = { type: 'object', required: ['id', 'room'], properties: { id: { type: 'integer', readOnly: true }, room: { type: 'string' } } }
  const json = { content: { 'application/json': { schema: shelf } } }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Library', version: '1.0.0' },
    paths: {
      '/shelves/': { post: { requestBody: { required: true, ...json }, responses: { 201: { description: 'made', headers: { Location: { schema: { type: 'string' } } }, ...json } } } },
      '/shelves/{id}/': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { 200: { description: 'a shelf', ...json }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'library.json')
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/shelves/', payload: { room: 'hall' } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, `/shelves/${created.json().id}/`, 'the item\'s path, as the document spells it')
  t.same((await app.inject({ url: created.headers.location as string })).json(), created.json(), 'and read there')
})

t.test('an item of one branch of a discriminated oneOf, patched to another (Ably\'s rule made http, patched to kafka): read as the new type\'s, what it was sent kept, what that type requires and no sample holds made of its own schema', async (t) => {
  const rule = (type: string, target: object) => ({ type: 'object', additionalProperties: false, required: ['ruleType', 'target'], properties: { id: { type: 'string', readOnly: true }, ruleType: { type: 'string', enum: [type] }, status: { type: 'string' }, target: { type: 'object', additionalProperties: false, ...target } } })
  const schemas = {
    http: rule('http', { required: ['url'], properties: { url: { type: 'string' }, enveloped: { type: 'boolean' } } }),
    kafka: rule('kafka', { required: ['brokers', 'routingKey'], properties: { brokers: { type: 'array', items: { type: 'string', pattern: '^[a-z]+:\\d+$' }, minItems: 1 }, routingKey: { type: 'string' } } })
  }
  const read = { oneOf: [{ $ref: '#/components/schemas/http' }, { $ref: '#/components/schemas/kafka' }], discriminator: { propertyName: 'ruleType', mapping: { http: '#/components/schemas/http', kafka: '#/components/schemas/kafka' } } }
  const document = {
    openapi: '3.0.3',
    info: { title: 'Rules', version: '1.0.0' },
    components: { schemas },
    paths: {
      '/rules': { post: { requestBody: { required: true, ...json(read) }, responses: { 201: { description: 'made', ...json(read) } } } },
      '/rules/{rule_id}': {
        parameters: [{ name: 'rule_id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { 200: { description: 'it', ...json(read) }, 404: { description: 'none' } } },
        patch: { requestBody: { required: true, ...json({ type: 'object' }) }, responses: { 200: { description: 'changed', ...json(read) }, 404: { description: 'none' } } }
      }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'rules.json')
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/rules', payload: { ruleType: 'http', status: 'on', target: { url: 'https://a.example', enveloped: true } } })
  t.equal(made.statusCode, 201)
  const { id } = made.json()
  const patched = await app.inject({ method: 'PATCH', url: `/rules/${id}`, payload: { ruleType: 'kafka', target: { routingKey: 'orders' } } })
  for (const answer of [patched, await app.inject({ method: 'GET', url: `/rules/${id}` })]) {
    t.equal(answer.statusCode, 200)
    const { target, ...rest } = answer.json()
    t.same(rest, { id, ruleType: 'kafka', status: 'on' }, 'the same rule, of the type it was patched to, its status kept')
    t.equal(target.routingKey, 'orders', 'what the patch wrote')
    t.ok(Array.isArray(target.brokers) && target.brokers.length > 0 && target.brokers.every((broker: string) => /^[a-z]+:\d+$/.test(broker)), `the brokers kafka requires, of its schema: ${JSON.stringify(target.brokers)}`)
    t.same(Object.keys(target).sort(), ['brokers', 'routingKey'], 'not the http target\'s url nor enveloped')
  }
})

t.test('an item that both branches of a oneOf take (InfluxDB\'s dashboard, a Dashboard or one with its cells\' view properties, told apart by its cells alone): answered as written, over the sample\'s members that tell the branch, each create its own key; a patch that wrote a value the answer cannot take: the sample\'s there', async (t) => {
  const dashboard = (cell: object) => ({ type: 'object', required: ['name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' }, cells: { type: 'array', items: cell } } })
  const read = { oneOf: [dashboard({ type: 'object', additionalProperties: false, properties: { x: { type: 'integer' } } }), dashboard({ type: 'object', required: ['view'], properties: { x: { type: 'integer' }, view: { type: 'string' } } })] }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Dashboards', version: '1.0.0' },
    paths: {
      '/dashboards': { post: { requestBody: { required: true, ...json({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } }) }, responses: { 201: { description: 'made', ...json(read) } } } },
      '/dashboards/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { 200: { description: 'it', ...json(read) }, 404: { description: 'none' } } },
        patch: { requestBody: { required: true, ...json({ type: 'object', properties: { name: { type: 'string' }, cells: { type: 'object' } } }) }, responses: { 200: { description: 'changed', ...json(read) } } }
      }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'dashboards.json')
  t.teardown(() => app.close())
  const made = await Promise.all(['Ops', 'Sales'].map((name) => app.inject({ method: 'POST', url: '/dashboards', payload: { name } })))
  t.same(made.map((answer) => answer.statusCode), [201, 201])
  const [ops, sales] = made.map((answer) => answer.json())
  t.match(ops, { name: 'Ops', cells: [{ x: Number }] }, 'the item\'s name, the sample\'s cells')
  t.match(sales, { name: 'Sales' })
  t.not(ops.id, sales.id, 'each its own key')
  t.same((await app.inject({ method: 'GET', url: `/dashboards/${ops.id}` })).json(), ops, 'read as answered')
  const patched = await app.inject({ method: 'PATCH', url: `/dashboards/${ops.id}`, payload: { name: 'Ops 2', cells: { x: 1, view: 'line' } } })
  t.equal(patched.statusCode, 200)
  t.match(patched.json(), { id: ops.id, name: 'Ops 2', cells: [{ x: Number }] }, 'the name patched, the cells the answer cannot take as written the sample\'s')
})

t.test('an item read as one of a whole and its public part (Vercel\'s deployment: each whole one is a public part too): answered as the public part, what sets them apart left out, what was written read back', async (t) => {
  const publicPart = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' }, regions: { type: 'array', items: { type: 'string' } } } }
  const whole = { type: 'object', required: ['id', 'name', 'build', 'ownerId'], properties: { ...publicPart.properties, build: { type: 'object' }, ownerId: { type: 'string' } } }
  const read = { oneOf: [whole, publicPart] }
  const document = {
    openapi: '3.1.0',
    info: { title: 'Deployments', version: '1.0.0' },
    paths: {
      '/deployments': { post: { requestBody: { required: true, ...json({ type: 'object', required: ['name'], properties: { name: { type: 'string' }, regions: { type: 'array', items: { type: 'string' } }, build: { type: 'object' } } }) }, responses: { 200: { description: 'made', ...json(whole) } } } },
      '/deployments/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...json(read) }, 404: { description: 'none' } } } }
    }
  }
  const { app, document: mocked } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'deployments.json')
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/deployments', payload: { name: 'site', regions: ['sfo1'], build: { env: 'x' } } })
  t.match(made.json(), { name: 'site', regions: ['sfo1'], build: { env: 'x' }, ownerId: String }, 'the create answers it whole')
  const got = (await app.inject({ url: `/deployments/${made.json().id}` })).json()
  t.same(got, { id: made.json().id, name: 'site', regions: ['sfo1'], ownerId: made.json().ownerId }, 'read as its public part: what it was sent, without the build that sets the whole apart')
  t.ok(createValidators(mocked).response(read)(got), 'valid against the read\'s oneOf')
})

t.test('a read that declares JSON twice, with an example and, with its charset, the schema (as Zuora\'s do): answers the item written, not the example', async (t) => {
  const amendment = { type: 'object', properties: { Id: { type: 'string', readOnly: true }, Name: { type: 'string' } } }
  const read = { 'application/json': { examples: { response: { value: { Id: 'A-1', Name: 'From the example' } } } }, 'application/json; charset=utf-8': { schema: amendment } }
  const document = {
    openapi: '3.0.0',
    info: { title: 'Amendments', version: '1.0.0' },
    paths: {
      '/amendments': { post: { requestBody: { required: true, ...json(amendment) }, responses: { 200: { description: 'made', content: read } } } },
      '/amendments/{Id}': { get: { parameters: [{ name: 'Id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', content: read }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'amendments.json')
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/amendments', payload: { Name: 'Renewal' } })
  t.match(made.json(), { Name: 'Renewal' })
  const { Id } = made.json()
  const answer = await app.inject({ method: 'GET', url: `/amendments/${Id}` })
  t.same([answer.statusCode, answer.json()], [200, { Id, Name: 'Renewal' }], 'what was written')
  t.match(answer.headers['content-type'], /^application\/json/)
})

t.test('a key of one of several patterns (Lucidtech\'s transitionId, anyOf two): each create a key of its own drawn from them, not the sample\'s every time', async (t) => {
  const transition = { type: 'object', properties: { transitionId: { readOnly: true, anyOf: [{ type: 'string', pattern: '^las:transition:[a-f0-9]{32}$' }, { type: 'string', pattern: '^las:transition:commons-[0-9A-Za-z-]+$' }] }, name: { type: 'string' } } }
  const document = {
    openapi: '3.0.0',
    info: { title: 'Transitions', version: '1.0.0' },
    paths: {
      '/transitions': { post: { requestBody: { required: true, ...json(transition) }, responses: { 200: { description: 'made', ...json(transition) } } } },
      '/transitions/{transitionId}': { get: { parameters: [{ name: 'transitionId', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...json(transition) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'transitions.json')
  t.teardown(() => app.close())
  const keys: string[] = []
  for (const name of ['a', 'b', 'c']) {
    const made = await app.inject({ method: 'POST', url: '/transitions', payload: { name } })
    keys.push(made.json().transitionId)
    t.same((await app.inject({ method: 'GET', url: `/transitions/${encodeURIComponent(made.json().transitionId)}` })).json(), made.json(), `${name} read back by its key`)
  }
  t.equal(new Set(keys).size, 3, `each its own: ${keys.join(', ')}`)
  t.ok(keys.every((key) => /^las:transition:([a-f0-9]{32}|commons-[0-9A-Za-z-]+)$/.test(key)), 'each of a pattern the key takes')
})

t.test('a list whose items require what a write does not give, declared as an allOf of the list and its description (AWS MediaPackage\'s manifests and their Url): each item made whole of its own schema, what was written kept', async (t) => {
  const schemas = {
    Manifests: { type: 'array', items: { $ref: '#/components/schemas/Manifest' } },
    Manifest: { type: 'object', required: ['Name', 'Url'], properties: { Name: { type: 'string' }, Url: { type: 'string', format: 'uri' } } },
    Endpoint: { type: 'object', required: ['Id'], properties: { Id: { type: 'string', readOnly: true }, Seconds: { type: 'integer' }, Manifests: { allOf: [{ $ref: '#/components/schemas/Manifests' }, { description: 'Its manifests.' }] } } }
  }
  const written = { type: 'object', properties: { Seconds: { type: 'integer' }, Manifests: { type: 'array', items: { type: 'object', required: ['Name'], properties: { Name: { type: 'string' } } } } } }
  const endpoint = json({ $ref: '#/components/schemas/Endpoint' })
  const document = {
    openapi: '3.0.0',
    info: { title: 'Endpoints', version: '1.0.0' },
    components: { schemas },
    paths: {
      '/endpoints': { post: { requestBody: { required: true, ...json(written) }, responses: { 200: { description: 'made', ...endpoint } } } },
      '/endpoints/{Id}': { get: { parameters: [{ name: 'Id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...endpoint }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'endpoints.json')
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/endpoints', payload: { Seconds: 60, Manifests: [{ Name: 'a' }, { Name: 'b' }] } })
  const read = (await app.inject({ method: 'GET', url: `/endpoints/${made.json().Id}` })).json()
  t.match(read, { Seconds: 60, Manifests: [{ Name: 'a', Url: String }, { Name: 'b', Url: String }] }, 'what was written, each manifest with a Url')
})

t.test('AWS\'s shapes (Amplify\'s apps): a list whose array is an allOf of it and its description lists what was created; keys of an unanchored pattern and a length drawn to fit it, none the document\'s sample', async (t) => {
  const schemas = {
    AppId: { type: 'string', pattern: 'd[a-z0-9]+', minLength: 1, maxLength: 20 },
    App: { type: 'object', required: ['appId', 'name'], properties: { appId: { allOf: [{ $ref: '#/components/schemas/AppId' }, { description: 'Its id.' }] }, name: { type: 'string' } } },
    Apps: { type: 'array', items: { $ref: '#/components/schemas/App' } },
    ListAppsResult: { type: 'object', required: ['apps'], properties: { apps: { allOf: [{ $ref: '#/components/schemas/Apps' }, { description: 'The apps.' }] }, nextToken: { type: 'string' } } },
    AppResult: { type: 'object', required: ['app'], properties: { app: { allOf: [{ $ref: '#/components/schemas/App' }, { description: 'The app.' }] } } }
  }
  const appId = { name: 'appId', in: 'path', required: true, schema: { $ref: '#/components/schemas/AppId' } }
  const document = {
    openapi: '3.0.0',
    info: { title: 'Amplify', version: '1.0.0' },
    components: { schemas },
    paths: {
      '/apps': {
        post: { requestBody: { required: true, ...json({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } }) }, responses: { 200: { description: 'made', ...json({ $ref: '#/components/schemas/AppResult' }) } } },
        get: { parameters: [{ name: 'nextToken', in: 'query', schema: { type: 'string' } }, { name: 'maxResults', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 100 } }], responses: { 200: { description: 'them', ...json({ $ref: '#/components/schemas/ListAppsResult' }) } } }
      },
      '/apps/{appId}': { get: { parameters: [appId], responses: { 200: { description: 'it', ...json({ $ref: '#/components/schemas/AppResult' }) } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'amplify.json')
  t.teardown(() => app.close())
  const sample = validSample(document, schemas.AppId, createValidators(document).response(schemas.AppId), { direction: 'response' })?.value
  const keys: string[] = []
  for (let i = 0; i < 30; i++) {
    const made = (await app.inject({ method: 'POST', url: '/apps', payload: { name: `app ${i}` } })).json()
    keys.push(made.app.appId)
    t.same((await app.inject({ method: 'GET', url: `/apps/${made.app.appId}` })).json(), made, `app ${i} read back by its key`)
  }
  t.equal(new Set(keys).size, 30, 'each its own key')
  t.ok(keys.every((key) => key.length <= 20 && /d[a-z0-9]+/.test(key)), `each of the pattern and length the key takes: ${keys.join(', ')}`)
  // The document's own value is what its clients, and a verifier beside them, put in a path for any
  // item: one made under it would be theirs to change.
  t.notOk(keys.some((key) => key === sample), `none the document's sample (${sample})`)
  const { apps } = (await app.inject({ method: 'GET', url: '/apps?maxResults=100' })).json()
  t.same(apps.map((listed: { appId: string }) => listed.appId), keys, 'listed, each once, in the order made')
})

t.test('a write whose body has no member where the item is enveloped (Square\'s examples, {"request_body": …} where the item is in "location"): an item of the server\'s values, each create its own key', async (t) => {
  const location = { type: 'object', properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } }
  const wrapped = json({ type: 'object', properties: { location } })
  const document = {
    openapi: '3.0.0',
    info: { title: 'Locations', version: '1.0.0' },
    paths: {
      '/locations': { post: { requestBody: { required: true, ...wrapped }, responses: { 200: { description: 'made', ...json({ type: 'object', properties: { location, errors: { type: 'array', items: { type: 'string' } } }, example: { location: { id: 'LOCATION_ID', name: 'Example' } } }) } } } },
      '/locations/{location_id}': { get: { parameters: [{ name: 'location_id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'it', ...json({ type: 'object', properties: { location } }) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'locations.json')
  t.teardown(() => app.close())
  const made = await Promise.all([1, 2].map(async () => await app.inject({ method: 'POST', url: '/locations', payload: { request_body: { location: { name: 'Atlanta' } } } })))
  const ids = made.map((answer) => answer.json().location.id)
  t.same(made.map((answer) => answer.statusCode), [200, 200])
  t.not(ids[0], ids[1], `each its own key, not the example's: ${ids.join(', ')}`)
  t.not(ids[0], 'LOCATION_ID')
  t.same((await app.inject({ method: 'GET', url: `/locations/${ids[0]}` })).json(), { location: { id: ids[0] } }, 'read back: the server\'s values alone')
  t.same((await app.inject({ method: 'POST', url: '/locations', payload: { location: { name: 'Austin' } } })).json().location.name, 'Austin', 'an item in its envelope, as before')
})

t.test('an item path whose parameter lists keys (DaniWeb\'s /groups/{ID}, an array of int32 from 1): each create a key of its own that the path takes as one of them', async (t) => {
  const group = { type: 'object', required: ['id'], properties: { id: { type: 'number', format: 'int32' }, name: { type: 'string' } } }
  const document = {
    openapi: '3.0.0',
    info: { title: 'Groups', version: '1.0.0' },
    paths: {
      '/groups': { post: { requestBody: { required: true, ...json({ type: 'object', properties: { name: { type: 'string' } } }) }, responses: { 200: { description: 'made', ...json({ type: 'object', properties: { data: group } }) } } } },
      '/groups/{ID}': { get: { parameters: [{ name: 'ID', in: 'path', required: true, style: 'simple', schema: { type: 'array', maxItems: 100, items: { type: 'integer', format: 'int32', minimum: 1 } } }], responses: { 200: { description: 'them', ...json({ type: 'object', properties: { data: group } }) }, 404: { description: 'none' } } } }
    }
  }
  const { app } = await buildMock(loadConfig({ LOG_LEVEL: 'silent' }), { text: '', document }, 'groups.json')
  t.teardown(() => app.close())
  const ids = []
  for (const name of ['a', 'b']) ids.push((await app.inject({ method: 'POST', url: '/groups', payload: { name } })).json().data.id)
  t.same(ids, [1, 2], 'each its own, from the least the path takes')
  t.same((await app.inject({ method: 'GET', url: '/groups/2' })).json(), { data: { id: 2, name: 'b' } }, 'read back')
})
