import fc from 'fast-check'
import t from 'tap'
import { standaloneSchema } from '../../src/openapi/routes/routes.ts'
import { assertError, AUTH, buildTestApp, document, openStoreOf, post, testConfig } from '../helpers/app.ts'

// Hostile input, generated from the document's own NewPlant schema: every valid body is stored
// exactly as sent (or is a replay, or a conflict, as a model of the store predicts); every
// invalid one gets 400 or 413 in the Error shape; nothing gets a 5xx; the process stays up.
// HOSTILE_RUNS sets the cases per property. The everyday suite runs two properties of 500 on
// SQLite; the system suite the full 10,000 on each store (hostile.system.test.ts,
// hostile.postgres.system.test.ts).
const RUNS = Number(process.env.HOSTILE_RUNS ?? 500)
const BODY_LIMIT = 16 * 1024 // a small limit, so that "huge" strings are cheap to make
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n }

const POLLUTING = /"(__proto__|constructor)":/
type Schema = Record<string, any>
type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json }

const newPlant = standaloneSchema(document, { $ref: '#/components/schemas/NewPlant' })
const defs: Record<string, Schema> = newPlant.$defs

/** The schema with $refs followed and allOf merged: an object's properties and required keys. */
function flatten (schema: Schema): Schema {
  if (schema.$ref !== undefined) return flatten(defs[schema.$ref.slice('#/$defs/'.length)])
  if (schema.allOf === undefined) return schema
  const parts = schema.allOf.map(flatten)
  return {
    type: 'object',
    properties: Object.assign({}, ...parts.map((p: Schema) => p.properties)),
    required: parts.flatMap((p: Schema) => p.required ?? [])
  }
}

const unicode = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('\u202Eright-to-left\u202C', '\u200F\u05E9\u05DC\u05D5\u05DD', '🌿🌵', 'e\u0301', '植物', '')
)

/** Values a schema accepts. */
function valid (raw: Schema): fc.Arbitrary<Json> {
  const schema = flatten(raw)
  if (schema.type === 'string') {
    const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u')
    return pattern === undefined ? unicode : unicode.filter((s) => pattern.test(s))
  }
  if (schema.type === 'integer' && schema.format === 'int64') {
    return fc.oneof(fc.bigInt(INT64), fc.integer(), fc.constantFrom(INT64.min, INT64.max, 2n ** 53n, 2n ** 53n + 1n, 0))
  }
  if (schema.type === 'integer') return fc.integer()
  if (schema.type === 'object') {
    const required = new Set<string>(schema.required ?? [])
    const known = Object.fromEntries(Object.entries<Schema>(schema.properties).map(([key, sub]) => [key, valid(sub)]))
    // Unknown properties are allowed (and dropped) since the schema does not forbid them; but
    // never a prototype-polluting key, at any depth: the service refuses those (see hostile).
    const extra = fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => !(k in known) && k !== '__proto__'), fc.jsonValue({ maxDepth: 3 }).filter((v) => !POLLUTING.test(JSON.stringify(v))), { maxKeys: 3 })
    return fc.tuple(fc.record(known, { requiredKeys: [...required] as any }), extra).map(([plant, more]) => ({ ...(more as object), ...plant } as Json))
  }
  throw new Error(`no generator for ${JSON.stringify(schema)}`)
}

/** Values a schema refuses, as raw JSON text. */
function invalid (raw: Schema): fc.Arbitrary<string> {
  const schema = flatten(raw)
  const wrongType = fc.constantFrom<Json>(null, true, false, [], {}, 1.5, 'text', 12)
  if (schema.type === 'string') {
    const breaking = fc.constantFrom('\u0000', '\uD800', '\uDFFF', 'a\uDBFFb')
    return fc.oneof(
      wrongType.filter((v) => typeof v !== 'string').map(stringify),
      fc.tuple(unicode, breaking, unicode).map(([a, b, c]) => stringify(a + b + c))
    )
  }
  if (schema.type === 'integer') {
    return fc.oneof(
      wrongType.filter((v) => !Number.isInteger(v)).map(stringify),
      fc.constantFrom('"12"', '1.5', '1e20', '-1e400', '9223372036854775807.5'),
      fc.bigInt({ min: INT64.max + 1n, max: 2n ** 80n }).map(String),
      fc.bigInt({ min: -(2n ** 80n), max: INT64.min - 1n }).map(String)
    )
  }
  // An object: break one field, drop a required one, or be no object at all.
  const entries = Object.entries<Schema>(schema.properties)
  const base = valid(raw) as fc.Arbitrary<Record<string, Json>>
  return fc.oneof(
    wrongType.filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)).map(stringify),
    fc.tuple(base, fc.constantFrom(...entries)).chain(([plant, [key, sub]]) =>
      invalid(sub).map((bad) => stringify(plant).replace(/^\{/, `{${JSON.stringify(key)}:${bad},`)).map((text) => dropKey(text, key, plant))),
    fc.tuple(base, fc.constantFrom(...(schema.required as string[]))).map(([plant, key]) => { const { [key]: _gone, ...rest } = plant; return stringify(rest) })
  )
}

/** JSON text with bigints as exact integer literals. */
function stringify (value: Json): string {
  return JSON.stringify(value, (_k, v) => typeof v === 'bigint' ? `@@${v}@@` : v).replace(/"@@(-?\d+)@@"/g, '$1')
}

/** Removes the original key from text where the mutation put a new one first: no duplicate keys. */
function dropKey (text: string, key: string, plant: Record<string, Json>): string {
  if (!(key in plant)) return text
  const { [key]: _gone, ...rest } = plant
  const first = text.slice(0, text.length - stringify(plant).length + 1)
  return first + stringify(rest).slice(1)
}

/** Hostile shapes beyond the schema: oversized, deep, polluting, duplicated, malformed. */
const hostile = fc.tuple(valid(newPlant) as fc.Arbitrary<Record<string, Json>>, fc.nat(5)).map(([plant, kind]) => {
  const text = stringify(plant)
  switch (kind) {
    case 0: return { text: stringify({ ...plant, name: 'x'.repeat(BODY_LIMIT) }), statuses: [413] }
    case 1: return { text: text.replace(/^\{/, `{"deep":${'['.repeat(40)}${']'.repeat(40)},`), statuses: [400] }
    case 2: return { text: text.replace(/^\{/, '{"__proto__":{"admin":true},'), statuses: [400] }
    case 3: return { text: text.replace(/^\{/, '{"constructor":{"prototype":{"admin":true}},'), statuses: [400] }
    case 4: return { text: text.replace(/^\{/, `{"name":${JSON.stringify(String(plant.name))},`), statuses: [400] }
    default: return { text: text.slice(0, Math.max(1, text.length - 2)), statuses: [400] }
  }
})

t.test('valid bodies are stored exactly as sent, with replays and conflicts as a model predicts', async (t) => {
  const config = await testConfig(t, { BODY_LIMIT_BYTES: String(BODY_LIMIT) })
  const app = await buildTestApp(t, config)
  const store = await openStoreOf(t, config.store.databaseUrl)
  const model = new Map<bigint, { name: string, tag?: string }>()
  await fc.assert(fc.asyncProperty(valid(newPlant) as fc.Arbitrary<Record<string, Json>>, async (plant) => {
    const id = BigInt(plant.id as number | bigint)
    const stored = { name: plant.name as string, ...(plant.tag === undefined ? {} : { tag: plant.tag as string }) }
    const before = model.get(id)
    const expected = before === undefined || (before.name === stored.name && before.tag === stored.tag) ? 200 : 409
    const res = await post(app, stringify(plant))
    if (res.statusCode !== expected) throw new Error(`expected ${expected}, got ${res.statusCode} ${res.body} for ${stringify(plant)}`)
    if (expected === 409) return
    if (before === undefined) model.set(id, stored)
    const answer = res.json()
    const got = await store.get(id)
    if (JSON.stringify(answer) !== JSON.stringify(stored) || got?.name !== stored.name || got?.tag !== stored.tag) {
      throw new Error(`stored ${JSON.stringify(got)} and answered ${res.body} for ${stringify(plant)}`)
    }
  }), { numRuns: RUNS })
  t.ok(model.size > 0, `${model.size} distinct plants stored`)
})

t.test('invalid and hostile bodies get 400 or 413 in the Error shape, never a 5xx', async (t) => {
  const config = await testConfig(t, { BODY_LIMIT_BYTES: String(BODY_LIMIT) })
  const app = await buildTestApp(t, config)
  const cases = fc.oneof(invalid(newPlant).map((text) => ({ text, statuses: [400] })), hostile)
  await fc.assert(fc.asyncProperty(cases, async ({ text, statuses }) => {
    const res = await post(app, text)
    const body = res.json()
    if (!statuses.includes(res.statusCode) || body.error !== res.statusCode || typeof body.message !== 'string') {
      throw new Error(`expected ${statuses} in the Error shape, got ${res.statusCode} ${res.body} for ${text.slice(0, 300)}`)
    }
  }), { numRuns: RUNS })
  assertError(t, await post(app, '{'), 400)
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, 'still alive')
  t.equal((await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"id":1,"name":"Fern"}' })).statusCode, 200, 'and still storing')
})
