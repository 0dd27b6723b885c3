import t from 'tap'
import { exactNumber, parseJsonBody } from '../../src/http/json-body.ts'
import { assertError, buildTestApp, openStoreOf, testConfig, TOKEN } from '../helpers/app.ts'
import { postPlant } from '../helpers/server-process.ts'

// Ids travel as raw JSON text: JSON.stringify would round them before they leave.
const body = (id: string, name = 'Fern') => `{"id":${id},"name":"${name}"}`

async function listening (t: any) {
  const config = await testConfig(t)
  const app = await buildTestApp(t, config)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const post = async (payload: string) => {
    const res = await postPlant(base, TOKEN, payload)
    const text = await res.text()
    return { statusCode: res.status, json: () => JSON.parse(text) }
  }
  return { post, store: (await openStoreOf(t, config.store.databaseUrl)) }
}

t.test('2^53 and 2^53 + 1 are two different plants, each replayed and conflicted exactly', async (t) => {
  const { post, store } = await listening(t)
  for (const [id, name] of [['9007199254740992', 'Even'], ['9007199254740993', 'Odd'], ['-9007199254740993', 'Negative odd'], ['-9007199254740992', 'Negative even']]) {
    t.equal((await post(body(id, name))).statusCode, 200, `${id} created`)
  }
  for (const [id, name] of [['9007199254740992', 'Even'], ['9007199254740993', 'Odd']]) {
    t.equal((await post(body(id, name))).statusCode, 200, `${id} replayed`)
    assertError(t, await post(body(id, 'Someone else')), 409, new RegExp(`Plant ${id} already exists`))
    t.same(await store.get(BigInt(id)), { id: BigInt(id), name }, `${id} stored exactly`)
  }
  t.same(await store.get(-9007199254740993n), { id: -9007199254740993n, name: 'Negative odd' })
})

t.test('the int64 boundaries are accepted and stored exactly', async (t) => {
  const { post, store } = await listening(t)
  const ids = ['9223372036854775807', '-9223372036854775808', '9223372036854775806', '-9223372036854775807', '9007199254740991', '-9007199254740991', '0']
  for (const id of ids) {
    t.equal((await post(body(id, `p${id}`))).statusCode, 200, `${id} accepted`)
    t.same(await store.get(BigInt(id)), { id: BigInt(id), name: `p${id}` }, `${id} round-trips`)
    t.equal((await post(body(id, `p${id}`))).statusCode, 200, `${id} replay`)
    assertError(t, await post(body(id, 'other')), 409)
  }
})

t.test('anything that is not an int64 answers 400 and stores nothing', async (t) => {
  const { post, store } = await listening(t)
  const rejected: Record<string, RegExp> = {
    '9223372036854775808': /body\/id must be an integer from -9223372036854775808 to 9223372036854775807/,
    '-9223372036854775809': /body\/id must be an integer from/,
    '99999999999999999999999': /body\/id must be an integer from/,
    '1e20': /body\/id must be an integer from/,
    '1e400': /body\/id must be an integer from/,
    1.5: /body\/id must be an integer from/,
    '9007199254740993.5': /body\/id must be an integer from/,
    '9223372036854775807.5': /body\/id must be an integer from/,
    '"12"': /body\/id must be an integer from/,
    '"9007199254740993"': /body\/id must be an integer from/,
    true: /body\/id must be an integer from/,
    false: /body\/id must be an integer from/,
    null: /body\/id must be an integer from/,
    '[1]': /body\/id must be an integer from/,
    '{}': /body\/id must be an integer from/
  }
  for (const [id, message] of Object.entries(rejected)) {
    assertError(t, await post(body(id)), 400, message)
  }
  assertError(t, await post('{"id":1,"name":12345678901234567890}'), 400, /body\/name must be string/)
  t.equal(await store.get(9223372036854775807n), undefined)
  t.equal(await store.get(9007199254740994n), undefined, 'no rounded neighbour was stored')
})

// JSON Schema: "an integer is a number with no fractional part", whatever its spelling.
// We follow it rather than reject such spellings, because clients (and their JSON libraries)
// legitimately emit 1.0 or 1e3 for whole numbers, and the rule is the validator's, not ours.
t.test('integers spelled with a fraction or an exponent are those integers', async (t) => {
  const { post, store } = await listening(t)
  const spellings: Array<[string, bigint]> = [
    ['1.0', 1n], ['1e3', 1000n], ['2E+3', 2000n], ['2.5e1', 25n], ['300e-2', 3n],
    ['9.007199254740993e15', 9007199254740993n], ['9007199254740995.000', 9007199254740995n],
    ['-9.223372036854775808e18', -9223372036854775808n]
  ]
  for (const [spelling, id] of spellings) {
    t.equal((await post(body(spelling, `as ${spelling}`))).statusCode, 200, `${spelling} accepted`)
    t.same(await store.get(id), { id, name: `as ${spelling}` }, `${spelling} is ${id}`)
  }
})

t.test('the lossless parse gives exact values, and leaves the rest alone', async (t) => {
  t.equal(exactNumber('9007199254740993'), 9007199254740993n)
  t.equal(exactNumber('-9223372036854775808'), -9223372036854775808n)
  t.equal(exactNumber('9007199254740991'), 9007199254740991, 'safe integers stay numbers')
  t.equal(exactNumber('1.25'), 1.25)
  t.equal(exactNumber('0.000'), 0)
  t.equal(exactNumber('1e400'), Infinity)
  t.ok(Number.isNaN(exactNumber('9007199254740993.5')), 'a fraction that would round to a whole double is no integer')
  t.same(parseJsonBody('{"a":[9007199254740993,1.5,"9007199254740993"],"b":{"c":1e2}}'), { a: [9007199254740993n, 1.5, '9007199254740993'], b: { c: 100 } })
  t.same(parseJsonBody('{"id":12,"name":"short"}'), { id: 12, name: 'short' })
})
