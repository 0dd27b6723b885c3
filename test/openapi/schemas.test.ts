import t from 'tap'
import { echo, engineApp } from '../helpers/engine.ts'

// Schemas as documents write them: a discriminated oneOf checked against the branch its property
// chooses, and named in the 400; the formats OpenAPI names; a 3.0 document meaning what 3.0 says
// (nullable, boolean exclusiveMinimum, a $ref's siblings ignored, byte a format), upgraded once as it is read.

const pet = (extra: Record<string, unknown>) => ({ type: 'object', required: ['petType'], properties: { petType: { type: 'string' }, ...extra } })
const components = {
  schemas: {
    Pet: { oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }], discriminator: { propertyName: 'petType', mapping: { kitty: '#/components/schemas/Cat' } } },
    Cat: pet({ meows: { type: 'boolean' } }),
    Dog: pet({ barks: { type: 'boolean' } }),
    Formats: {
      type: 'object',
      properties: Object.fromEntries(['int32', 'int64', 'float', 'double'].map((f) => [f, { type: f.startsWith('int') ? 'integer' : 'number', format: f }])
        .concat(['byte', 'binary', 'date', 'date-time', 'uuid', 'email', 'uri'].map((f) => [f, { type: 'string', format: f }])))
    }
  }
}
const body = (operationId: string, schema: unknown) => ({ post: { operationId, requestBody: { required: true, content: { 'application/json': { schema } } }, responses: { 200: { description: 'echo' } } } })

t.test('a discriminator chooses the branch, and a 400 names it', async (t) => {
  const document = { openapi: '3.1.0', info: { title: 'Pets', version: '1.0.0' }, paths: { '/pets': body('pets', { $ref: '#/components/schemas/Pet' }) }, components }
  const app = await engineApp(t, document, { pets: echo })
  const send = async (pet: unknown) => await app.inject({ method: 'POST', url: '/pets', payload: pet as object })
  t.equal((await send({ petType: 'Dog', barks: true })).statusCode, 200, 'a branch by its schema\'s name')
  t.equal((await send({ petType: 'kitty', meows: true })).statusCode, 200, 'a branch by the mapping')
  t.equal((await send({ petType: 'Cat', meows: true })).statusCode, 400, 'a mapped branch is chosen by its mapping\'s value alone')
  t.equal((await send({ petType: 'kitty', meows: 'yes' })).json().detail, 'body/meows must be boolean (as Cat, which petType "kitty" chooses)', 'the error names the branch chosen')
  t.equal((await send({ petType: 'Cow' })).json().detail, 'body/petType must be one of kitty, Dog, which choose its schema')
  t.equal((await send({ barks: true })).json().detail, 'body must have required property \'petType\'')
  for (const value of [[], 5, 'Dog', true]) {
    const refused = await app.inject({ method: 'POST', url: '/pets', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(value) })
    t.same([refused.statusCode, refused.json().detail], [400, 'body must be object, whose petType chooses its schema'], `${JSON.stringify(value)}: no object, no branch takes it`)
  }
})

t.test('a discriminated oneOf of which a branch takes what is no object: that value valid, by that branch', async (t) => {
  const document = {
    openapi: '3.1.0',
    info: { title: 'Pets', version: '1.0.0' },
    paths: { '/pets': body('pets', { oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Named' }], discriminator: { propertyName: 'petType' } }) },
    components: { schemas: { Cat: components.schemas.Cat, Named: { type: 'string', minLength: 3 } } }
  }
  const app = await engineApp(t, document, { pets: echo })
  const send = async (value: unknown) => (await app.inject({ method: 'POST', url: '/pets', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(value) })).statusCode
  t.same([await send('Tom'), await send('To'), await send(5)], [200, 400, 400])
})

t.test('without a mapping, a branch whose schema pins the property to its own values is chosen by them, not by its name', async (t) => {
  const kind = (name: string, pin: object) => ({ type: 'object', required: ['type'], properties: { type: { type: 'string', ...pin }, [`${name}Only`]: { type: 'number' } } })
  const document = {
    openapi: '3.1.0',
    info: { title: 'Books', version: '1.0.0' },
    paths: { '/books': body('books', { $ref: '#/components/schemas/Kind' }) },
    components: {
      schemas: {
        Kind: { oneOf: ['Paper', 'Ebook', 'Audio'].map((name) => ({ $ref: `#/components/schemas/${name}` })), discriminator: { propertyName: 'type' } },
        Paper: kind('paper', { enum: ['paper', 'print'] }),
        // Pinned through allOf, by const.
        Ebook: { allOf: [{ $ref: '#/components/schemas/Base' }, { properties: { type: { const: 'ebook' } } }] },
        Base: kind('ebook', {}),
        // Pinned by nothing: its name chooses it.
        Audio: kind('audio', {})
      }
    }
  }
  const app = await engineApp(t, document, { books: echo })
  const send = async (book: unknown) => await app.inject({ method: 'POST', url: '/books', payload: book as object })
  for (const type of ['paper', 'print', 'ebook', 'Audio']) t.equal((await send({ type })).statusCode, 200, `${type} chooses its branch`)
  t.equal((await send({ type: 'print', paperOnly: 'x' })).json().detail, 'body/paperOnly must be number (as Paper, which type "print" chooses)', 'and the branch it chooses judges the rest')
  t.equal((await send({ type: 'Paper' })).json().detail, 'body/type must be one of paper, print, ebook, Audio, which choose its schema', 'the name of a branch that pins other values chooses nothing')
})

t.test('the formats OpenAPI names are checked', async (t) => {
  const document = { openapi: '3.1.0', info: { title: 'Formats', version: '1.0.0' }, paths: { '/formats': body('formats', { $ref: '#/components/schemas/Formats' }) }, components }
  const app = await engineApp(t, document, { formats: echo })
  const send = async (json: string) => await app.inject({ method: 'POST', url: '/formats', payload: json, headers: { 'content-type': 'application/json' } })
  const ok = await send('{"int32":2147483647,"int64":9007199254740993,"float":1.5,"double":2.5,"byte":"aGVsbG8=","binary":"anything","date":"2026-11-26","date-time":"2026-11-26T12:00:00Z","uuid":"123e4567-e89b-12d3-a456-426614174000","email":"a@example.com","uri":"https://example.com/x"}')
  t.equal(ok.statusCode, 200, ok.body)
  t.equal(ok.json().body.int64, '9007199254740993n', 'an int64 beyond 2^53, exact')
  // Each a JSON literal its format refuses.
  const wrong: Record<string, string> = { int32: '2147483648', int64: '9223372036854775808', byte: '"not base64!"', date: '"2026-13-01"', 'date-time': '"yesterday"', uuid: '"nope"', email: '"nobody"', uri: '"not a uri"' }
  for (const [format, literal] of Object.entries(wrong)) {
    const res = await send(`{"${format}":${literal}}`)
    t.equal(res.statusCode, 400, `${format}: ${literal}`)
    t.match(res.json().detail, `body/${format} must`)
  }
})

t.test('a JSON number past 2^53, read exactly: a `number` takes it as the double JSON reads, its bounds checked on that; an integer not int64 refuses it by name, however spelled; a wrong type named as `type` names it', async (t) => {
  const numbers = { type: 'object', properties: { number: { type: 'number' }, small: { type: 'number', maximum: 100 }, integer: { type: 'integer' }, maybe: { type: ['integer', 'null'] } } }
  const document = { openapi: '3.1.0', info: { title: 'Numbers', version: '1.0.0' }, paths: { '/numbers': body('numbers', numbers) } }
  const app = await engineApp(t, document, { numbers: echo })
  const send = async (json: string) => await app.inject({ method: 'POST', url: '/numbers', payload: json, headers: { 'content-type': 'application/json' } })
  const taken = await send('{"number":9007199254740993,"maybe":null}')
  t.equal(taken.statusCode, 200, taken.body)
  t.same(taken.json().body, { number: 9007199254740992, maybe: null }, 'the double a JSON parser reads: no bigint reaches a handler typed number')
  const exact = /^body\/(integer|maybe) must be an integer from -9007199254740991 to 9007199254740991 \(one beyond would be rounded; format: int64 keeps it exact\)$/
  const refused: Array<[string, RegExp]> = [
    ['{"small":9007199254740993}', /^body\/small must be <= 100$/],
    ['{"integer":9007199254740993}', exact],
    ['{"integer":1e20}', exact],
    ['{"maybe":-12345678901234567890}', exact],
    ['{"number":"1"}', /^body\/number must be number$/],
    ['{"maybe":"1"}', /^body\/maybe must be integer,null$/]
  ]
  for (const [json, detail] of refused) {
    const res = await send(json)
    t.equal(res.statusCode, 400, json)
    t.match(res.json().detail, detail, `${json}: ${res.json().detail}`)
  }
})

t.test('a 3.0 document means what 3.0 says', async (t) => {
  const document = {
    openapi: '3.0.3',
    info: { title: 'Old', version: '1.0.0' },
    paths: { '/old': body('old', { $ref: '#/components/schemas/Old' }) },
    components: {
      schemas: {
        Old: {
          type: 'object',
          properties: {
            maybe: { type: 'string', nullable: true },
            positive: { type: 'number', minimum: 0, exclusiveMinimum: true },
            encoded: { type: 'string', format: 'byte' },
            // 3.0 ignores what stands beside a $ref: this is a Thing, not a string.
            thing: { $ref: '#/components/schemas/Thing', type: 'string' }
          },
          example: { maybe: null }
        },
        Thing: { type: 'object', properties: { a: { type: 'integer' } } }
      }
    }
  }
  const app = await engineApp(t, document, { old: echo })
  const send = async (value: unknown) => (await app.inject({ method: 'POST', url: '/old', payload: value as object })).statusCode
  t.equal(await send({ maybe: null, positive: 0.5, thing: { a: 1 } }), 200, 'nullable takes null; a $ref\'s siblings are ignored')
  t.equal(await send({ positive: 0 }), 400, 'exclusiveMinimum: true excludes its minimum')
  t.equal(await send({ maybe: 5 }), 400, 'nullable adds null to the type, not more')
  t.equal(await send({ thing: 'a string' }), 400, 'the $ref, not its sibling, says what thing is')
  // The upgrade writes byte as contentEncoding, which 2020-12 never checks; 3.0's format is.
  t.equal(await send({ encoded: 'ZXhhbXBsZQ==' }), 200, 'format: byte takes base64')
  t.equal(await send({ encoded: 'string' }), 400, 'format: byte refuses what is not base64, as a 3.0 format')
})

t.test('a pattern that backtracks without end on ECMAScript\'s engine is matched in linear time', async (t) => {
  // A published description's pattern for URLs: nested quantifiers, exponential on a near miss.
  const url = { type: 'string', pattern: '^(https?:\\/\\/)?([\\da-z\\.-]+)\\.([a-z\\.]{2,6})([\\/\\w \\.-]*)*\\/?$' }
  const word = { type: 'string', pattern: '^([a-z]+)+$' }
  const document = { openapi: '3.1.0', info: { title: 'Links', version: '1.0.0' }, paths: { '/links': body('links', { type: 'object', properties: { url, word } }) } }
  const app = await engineApp(t, document, { links: echo })
  const send = async (value: string, other: Record<string, string> = {}) => await app.inject({ method: 'POST', url: '/links', payload: { url: value, ...other } })
  t.equal((await send('https://example.com/a/b')).statusCode, 200, 'what it matches')
  t.equal((await send('https://example.com/a/b', { word: 'fern' })).statusCode, 200, 'each pattern its own: another of the same kind')
  t.equal((await send('https://example.com/a/b', { word: 'Fern' })).json().detail, 'body/word must match pattern "^([a-z]+)+$"')
  // On ECMAScript's engine this string takes minutes (more for each character): the test would time out.
  const refused = await send(`http://${'a'.repeat(40)}.com/${'a'.repeat(40)}!`)
  t.equal(refused.statusCode, 400)
  t.match(refused.json().detail, /^body\/url must match pattern/)
})
