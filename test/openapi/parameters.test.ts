import t from 'tap'
import { echo, engineApp } from '../helpers/engine.ts'

// Parameters in every location and style (OpenAPI's "style values" table), read into the values
// their schemas describe before the handler sees them: a list of one where a list is declared,
// numbers where numbers are, JSON where a parameter is given by content; unknown query
// parameters allowed. An echo handler shows what the engine made of each.

const integer = { type: 'integer' }
const list = { type: 'array', items: integer }
const rgb = { type: 'object', properties: { R: integer, G: integer, B: integer } }

/** One operation per case: `GET /<name>/{v}` for a path parameter, `GET /<name>` for the rest. */
const cases: Record<string, Record<string, unknown>> = {
  'path-simple': { in: 'path', schema: integer },
  'path-simple-list': { in: 'path', schema: list },
  'path-simple-object': { in: 'path', schema: rgb },
  'path-simple-object-exploded': { in: 'path', schema: rgb, explode: true },
  'path-label': { in: 'path', style: 'label', schema: integer },
  'path-label-list': { in: 'path', style: 'label', schema: list },
  'path-label-list-exploded': { in: 'path', style: 'label', schema: list, explode: true },
  'path-label-object-exploded': { in: 'path', style: 'label', schema: rgb, explode: true },
  'path-union': { in: 'path', schema: { oneOf: [integer, { type: 'string' }] } },
  // PeerTube's video id: its id, UUID or short UUID, each a schema of its own.
  'path-id-or-uuid': { in: 'path', schema: { oneOf: ['id', 'UUIDv4', 'shortUUID'].map((name) => ({ $ref: `#/components/schemas/${name}` })) } },
  'path-matrix': { in: 'path', style: 'matrix', schema: integer },
  'path-matrix-list': { in: 'path', style: 'matrix', schema: list },
  'path-matrix-list-exploded': { in: 'path', style: 'matrix', schema: list, explode: true },
  'path-matrix-object': { in: 'path', style: 'matrix', schema: rgb },
  'path-matrix-object-exploded': { in: 'path', style: 'matrix', schema: rgb, explode: true },
  'query-form': { in: 'query', schema: list },
  'query-form-unexploded': { in: 'query', schema: list, explode: false },
  'query-space': { in: 'query', style: 'spaceDelimited', schema: list },
  'query-pipe': { in: 'query', style: 'pipeDelimited', schema: list },
  'query-deep': { in: 'query', style: 'deepObject', explode: true, schema: { type: 'object', properties: { color: { type: 'string' }, size: integer, tags: { type: 'array', items: { type: 'string' } } } } },
  'query-deep-list': { in: 'query', style: 'deepObject', explode: true, schema: list },
  'query-deep-map': { in: 'query', style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } } },
  'query-deep-primitive': { in: 'query', style: 'deepObject', explode: true, schema: { type: 'string' } },
  'query-any': { in: 'query', schema: { anyOf: [integer, { type: 'string', enum: [''] }] } },
  'query-object-exploded': { in: 'query', schema: rgb },
  'query-object-unexploded': { in: 'query', schema: rgb, explode: false },
  'query-json': { in: 'query', content: { 'application/json': { schema: { type: 'object', required: ['a'], properties: { a: integer } } } } },
  'header-list': { in: 'header', name: 'X-Values', schema: list },
  'header-object': { in: 'header', name: 'X-Colour', schema: rgb, explode: true },
  'cookie-primitive': { in: 'cookie', schema: integer },
  'cookie-list': { in: 'cookie', schema: list, explode: false },
  'query-number': { in: 'query', schema: { type: 'number' } },
  'query-int64': { in: 'query', schema: { type: 'integer', format: 'int64' } },
  'header-integer': { in: 'header', name: 'X-Count', schema: integer }
}

const document = {
  openapi: '3.1.0',
  info: { title: 'Parameters', version: '1.0.0' },
  paths: Object.fromEntries(Object.entries(cases).map(([name, parameter]) => [
    parameter.in === 'path' ? `/${name}/{v}` : `/${name}`,
    { get: { operationId: name, parameters: [{ name: 'v', required: true, ...parameter }], responses: { 200: { description: 'echo' } } } }
  ])),
  components: {
    schemas: {
      id: { type: 'integer', minimum: 1 },
      UUIDv4: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
      shortUUID: { type: 'string' }
    }
  }
}

const handlers = Object.fromEntries(Object.keys(cases).map((name) => [name, echo]))

t.test('each style, read into its schema\'s values', async (t) => {
  const app = await engineApp(t, document, handlers)
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 200, `${url}: ${res.body}`)
    return res.json()
  }
  const path = async (url: string) => (await get(url)).params.v
  const query = async (url: string) => (await get(url)).query.v
  t.equal(await path('/path-simple/5'), 5, 'simple: a number')
  t.same(await path('/path-simple-list/3,4,5'), [3, 4, 5], 'simple: a list')
  t.same(await path('/path-simple-list/3'), [3], 'a list of one')
  t.same(await path('/path-simple-object/R,100,G,200'), { R: 100, G: 200 }, 'simple: an object, names and values in turn')
  t.same(await path('/path-simple-object-exploded/R=100,G=200'), { R: 100, G: 200 }, 'simple, exploded: name=value')
  t.equal(await path('/path-label/.5'), 5, 'label')
  t.same(await path('/path-label-list/.3,4,5'), [3, 4, 5], 'label: a list')
  t.same(await path('/path-label-list-exploded/.3.4.5'), [3, 4, 5], 'label, exploded')
  t.same(await path('/path-label-object-exploded/.R=1.G=2'), { R: 1, G: 2 }, 'label, exploded object')
  t.equal(await path('/path-union/5'), 5, 'oneOf an integer and a string: the text of an integer is the integer, once')
  t.equal(await path('/path-union/main.yml'), 'main.yml', 'and other text the string')
  t.equal(await path('/path-id-or-uuid/42'), 42, 'oneOf of $refs, an integer and two texts (PeerTube\'s video id): the text of an integer is the integer')
  t.equal(await path('/path-id-or-uuid/2y84q2MQUMWPbiEcxNXMgC'), '2y84q2MQUMWPbiEcxNXMgC', 'other text the text the one branch takes')
  const uuid = await app.inject({ url: '/path-id-or-uuid/9c9de5e8-0a1e-484a-b099-e80766180a6d' })
  t.same([uuid.statusCode, uuid.json().detail], [400, 'params/v must match exactly one schema in oneOf'], 'and a UUID, which both its texts take, not at all: a oneOf still takes one branch of a type')
  t.equal(await query('/query-any?v=5'), 5, 'anyOf an integer and "" (Stripe\'s number, or "" to unset it): the text of an integer is the integer')
  t.equal(await query('/query-any?v='), '', 'and "" the empty text')
  t.equal(await path('/path-matrix/;v=5'), 5, 'matrix')
  t.same(await path('/path-matrix-list/;v=3,4,5'), [3, 4, 5], 'matrix: a list')
  t.same(await path('/path-matrix-list-exploded/;v=3;v=4;v=5'), [3, 4, 5], 'matrix, exploded')
  t.same(await path('/path-matrix-object/;v=R,1,G,2'), { R: 1, G: 2 }, 'matrix: an object')
  t.same(await path('/path-matrix-object-exploded/;R=1;G=2'), { R: 1, G: 2 }, 'matrix, exploded object')
  t.same(await query('/query-form?v=3&v=4&other=ignored'), [3, 4], 'form, exploded; an unknown parameter is allowed')
  t.same(await query('/query-form?v=3'), [3], 'a list of one')
  t.same(await query('/query-form-unexploded?v=3,4'), [3, 4], 'form, not exploded')
  t.same(await query('/query-space?v=3%204'), [3, 4], 'spaceDelimited')
  t.same(await query('/query-pipe?v=3|4'), [3, 4], 'pipeDelimited')
  t.same(await query('/query-deep?v[color]=red&v[size]=2&v[tags]=a'), { color: 'red', size: 2, tags: ['a'] }, 'deepObject')
  t.same(await query('/query-deep?v[color]=red&v[color][x][y]=blue'), { color: 'red' }, 'deepObject: a member given as text stays so, deeper ones ignored')
  t.same(await query('/query-deep?v[tags][]=a&v[tags][]=b'), { tags: ['a', 'b'] }, 'deepObject: [] is the next item, at any depth')
  t.same(await query('/query-deep-list?v[1]=4&v[0]=3&v[2]=5'), [3, 4, 5], 'deepObject, a list (Stripe\'s expand): indices, in their order')
  t.same(await query('/query-deep-list?v[]=3&v[]=4'), [3, 4], 'or [] for each item')
  t.same(await query('/query-deep?v[tags][1]=b&v[tags][0]=a'), { tags: ['a', 'b'] }, 'deepObject: a list within by index, as Stripe\'s own client sends subscription_data[default_tax_rates][0]')
  t.same(await query('/query-deep-map?v[0]=a&v[1]=b'), { 0: 'a', 1: 'b' }, 'but a map whose keys are numbers stays a map: only where the schema declares a list')
  t.equal(await query('/query-deep-primitive?v=red'), 'red', 'deepObject on a value no object (Stripe styles every field so): v=red, as form')
  t.same(await query('/query-object-exploded?R=1&G=2&other=x'), { R: 1, G: 2 }, 'form, exploded object: its members are parameters')
  t.same(await query('/query-object-unexploded?v=R,1,G,2'), { R: 1, G: 2 }, 'form object, not exploded')
  t.same(await query(`/query-json?v=${encodeURIComponent('{"a":1}')}`), { a: 1 }, 'JSON in a query, by content')
  t.same((await get('/header-list', { 'x-values': '3, 4' })).headers['x-values'], [3, 4], 'a header list')
  t.same((await get('/header-object', { 'x-colour': 'R=1,G=2' })).headers['x-colour'], { R: 1, G: 2 }, 'a header object, exploded')
  t.equal((await get('/cookie-primitive', { cookie: 'v=5; other=1' })).cookies.v, 5, 'a cookie')
  t.same((await get('/cookie-list', { cookie: 'v=3,4' })).cookies.v, [3, 4], 'a cookie list')
})

t.test('parameters that share a segment: each up to the text after it, the narrowest template first; two with nothing between them, by the values their schemas list or an integer\'s digits; one before an extension, up to its last dot', async (t) => {
  const operationId = (path: string) => path.replace(/\W/g, '')
  const segment = (path: string, ...parameters: Array<[string, object]>) => [path, { get: { operationId: operationId(path), parameters: parameters.map(([name, schema]) => ({ name, in: 'path', required: true, schema })), responses: { 200: { description: 'echo' } } } }]
  const shared = {
    openapi: '3.1.0',
    info: { title: 'Segments', version: '1.0.0' },
    paths: Object.fromEntries([
      segment('/files/{name}.json', ['name', { type: 'string' }]),
      segment('/jobs/{id}:cancel', ['id', { type: 'integer' }]),
      // As Oxford Dictionaries' /entries/{source_lang}/{word_id}/regions={region}: a value it does not list is still its own, refused.
      segment('/words/{word}/regions={region}', ['word', { type: 'string' }], ['region', { type: 'string', enum: ['gb', 'us'] }]),
      // As Buffer's /profiles/{id}{mediaTypeExtension}: the split is the extension's to say.
      segment('/profiles/{id}{format}', ['id', { type: 'string' }], ['format', { type: 'string', enum: ['.json', '.xml'] }]),
      // As NASA's /api/projects/{id}{.format}: an integer, then whatever follows its digits.
      segment('/projects/{id}{.format}', ['id', { type: 'integer', format: 'int64' }], ['.format', { type: 'string' }]),
      // As TomTom's /reverseGeocode/{position}.{ext}: a position holds dots, an extension none.
      segment('/geocode/{position}.{ext}', ['position', { type: 'string' }], ['ext', { type: 'string', enum: ['json', 'xml'] }]),
      // As Microsoft Graph's chart images: OData functions whose parameters grow, the fewest first.
      segment('/chart/image(width={width})', ['width', { type: 'integer' }]),
      segment('/chart/image(width={width},height={height})', ['width', { type: 'integer' }], ['height', { type: 'integer' }]),
      segment('/chart/image(width={width},height={height},fittingMode=\'{fittingMode}\')', ['width', { type: 'integer' }], ['height', { type: 'integer' }], ['fittingMode', { type: 'string' }])
    ])
  }
  const app = await engineApp(t, shared, Object.fromEntries(Object.keys(shared.paths).map((path) => [operationId(path), echo])))
  const params = async (url: string) => {
    const res = await app.inject({ url })
    return res.statusCode === 200 ? res.json().params : res.statusCode
  }
  t.same(await params('/files/a.b.json'), { name: 'a.b' })
  t.same(await params('/jobs/7:cancel'), { id: 7 })
  t.same(await params('/profiles/string.json'), { id: 'string', format: '.json' })
  t.same(await params('/profiles/a.b.xml'), { id: 'a.b', format: '.xml' })
  t.equal(await params('/profiles/a.txt'), 404, 'a format it does not list: no path of the document')
  t.same(await params('/projects/-17json'), { id: -17, '.format': 'json' }, 'an integer beside a parameter: its digits')
  t.same(await params('/projects/17.xml'), { id: 17, '.format': '.xml' })
  t.equal(await params('/projects/json'), 404, 'no digits: no path of the document')
  t.same(await params('/words/ace/regions=gb'), { word: 'ace', region: 'gb' })
  t.equal(await params('/words/ace/regions=fr'), 400, 'a region it does not list: refused as the region\'s')
  t.same(await params('/geocode/37.8328,-122.27669.xml'), { position: '37.8328,-122.27669', ext: 'xml' }, 'a parameter before an extension: all up to the last dot')
  t.equal(await params('/geocode/37.8328,-122.27669.yaml'), 400, 'an extension it does not list: refused as the extension\'s')
  t.same(await params('/chart/image(width=5)'), { width: 5 })
  t.same(await params('/chart/image(width=5,height=7)'), { width: 5, height: 7 }, 'the template that matches it narrowest: not width "5,height=7"')
  t.same(await params('/chart/image(width=5,height=7,fittingMode=\'fit\')'), { width: 5, height: 7, fittingMode: 'fit' })
})

t.test('what its schema does not take answers 400, naming where', async (t) => {
  const app = await engineApp(t, document, handlers)
  const refused = async (url: string, message: RegExp, headers: Record<string, string> = {}) => {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 400, url)
    // This document declares no error answers: problem details.
    t.match(res.json().detail, message)
  }
  await refused('/path-simple/abc', /^params\/v must be integer$/)
  await refused('/path-simple-list/1,x', /^params\/v\/1 must be integer$/)
  await refused('/query-form', /^querystring must have required property 'v'$/)
  await refused('/query-form?v=1&v=x', /^querystring\/v\/1 must be integer$/)
  await refused('/query-deep?v[size]=big', /^querystring\/v\/size must be integer$/)
  await refused('/query-deep-list?v[0]=3&v[x]=4', /^querystring\/v\/0 must be integer$/)
  await refused(`/query-json?v=${encodeURIComponent('{"b":1}')}`, /^querystring\/v must have required property 'a'$/)
  await refused('/query-json?v=not-json', /^querystring\/v must be object$/)
  await refused('/header-list', /^headers must have required property 'x-values'$/)
  await refused('/cookie-primitive', /^cookies must have required property 'v'$/, { cookie: 'w=1' })
  await refused('/cookie-primitive', /^cookies\/v must be integer$/, { cookie: 'v=x' })
})

t.test('numbers read from text are finite, and integers exact or refused, never rounded', async (t) => {
  const app = await engineApp(t, document, handlers)
  const huge = '9'.repeat(400)
  const beyond = '9007199254740993' // 2^53 + 1, which a number rounds to ...992
  const refusals: Array<[string, RegExp, Record<string, string>?]> = [
    [`/query-form?v=1&v=${huge}`, /^querystring\/v\/1 must be a finite number$/],
    ['/query-form?v=1e999999', /^querystring\/v\/0 must be a finite number$/],
    ['/query-number?v=1e999999', /^querystring\/v must be a finite number$/],
    ['/query-number?v=-Infinity', /^querystring\/v must be a finite number$/],
    ['/query-number?v=NaN', /^querystring\/v must be number$/],
    [`/path-simple/${beyond}`, /^params\/v must be an integer from -9007199254740991 to 9007199254740991/],
    [`/query-form?v=${beyond}`, /^querystring\/v\/0 must be an integer from/],
    ['/header-integer', /^headers\/x-count must be a finite number$/, { 'x-count': 'Infinity' }],
    ['/header-integer', /^headers\/x-count must be an integer from/, { 'x-count': '1e20' }],
    ['/cookie-primitive', /^cookies\/v must be an integer from/, { cookie: `v=${beyond}` }]
  ]
  for (const [url, message, headers = {}] of refusals) {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 400, `${url.slice(0, 60)} ${JSON.stringify(headers)}`)
    t.match(res.json().detail, message)
  }
  t.same(JSON.parse((await app.inject({ url: `/query-int64?v=${beyond}` })).body).query, { v: `${beyond}n` }, 'int64 keeps it exact')
  t.same(JSON.parse((await app.inject({ url: '/query-number?v=1e300' })).body).query, { v: 1e300 }, 'a large finite number is a number')
  t.same(JSON.parse((await app.inject({ url: '/path-simple/9007199254740991' })).body).params, { v: 9007199254740991 }, 'the largest exact integer is read')
})
