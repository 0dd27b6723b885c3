import t from 'tap'
import { InsufficientScopeError, MissingCredentialsError, UnauthorizedError } from '../../src/errors.ts'
import type { Checks } from '../../src/openapi/requests/security.ts'
import { engineApp } from '../helpers/engine.ts'

// Security as the document says it: alternatives (any one will do) of requirements (all of their
// schemes), each scheme checked by the check bound to its kind. The mock's checks look at presence
// and form; a service binds its own (here, one that knows its keys and scopes). A request with no
// credentials is told which would do; bad ones get the refusal of their scheme; missing scopes 403.

const ok = { 200: { description: 'ok' } }
const operation = (operationId: string, security: unknown[]) => ({ get: { operationId, security, responses: ok } })
const document = {
  openapi: '3.1.0',
  info: { title: 'Security', version: '1.0.0' },
  security: [{ bearer: [] }],
  paths: {
    '/either': operation('either', [{ bearer: [] }, { key: [] }]),
    '/both': operation('both', [{ key: [], basic: [] }]),
    '/query': operation('query', [{ queryKey: [] }]),
    '/cookie': operation('cookie', [{ cookieKey: [] }]),
    '/scoped': operation('scoped', [{ oauth: ['things:write'] }]),
    '/public': operation('public', []),
    '/optional': operation('optional', [{}, { bearer: [] }]),
    '/again': operation('again', [{ key: [] }, { bearer: [] }, { key: [] }]),
    '/default': { get: { operationId: 'default', responses: ok } }
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      basic: { type: 'http', scheme: 'basic' },
      key: { type: 'apiKey', in: 'header', name: 'X-Key' },
      queryKey: { type: 'apiKey', in: 'query', name: 'api_key' },
      cookieKey: { type: 'apiKey', in: 'cookie', name: 'session' },
      oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://auth.example.com/token', scopes: { 'things:write': 'write' } } } }
    }
  }
}
const handlers = Object.fromEntries(Object.values(document.paths).map((item: any) => [item.get.operationId, async () => ({ status: 200 })]))
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`

t.test('the mock\'s checks: presence and form, for each kind of scheme, as alternatives and requirements say', async (t) => {
  const app = await engineApp(t, document, handlers)
  const status = async (url: string, headers: Record<string, string> = {}) => (await app.inject({ url, headers })).statusCode
  t.equal(await status('/either', { authorization: 'Bearer abc' }), 200, 'one alternative: a bearer token')
  t.equal(await status('/either', { 'x-key': 'k' }), 200, 'the other: an API key')
  const none = await app.inject({ url: '/either' })
  t.equal(none.statusCode, 401)
  t.equal(none.json().detail, 'Missing credentials: send a bearer token (Authorization: Bearer …) (bearer), or an API key in the X-Key header (key)', 'what would do, by name')
  t.equal(none.headers['www-authenticate'], 'Bearer', 'and the challenge of the http scheme')
  t.equal((await app.inject({ url: '/again' })).json().detail, 'Missing credentials: send an API key in the X-Key header (key), or a bearer token (Authorization: Bearer …) (bearer)', 'an alternative listed again (as xtrf lists its one, four times): named once')
  const malformed = await app.inject({ url: '/either', headers: { authorization: 'Bearer not a token' } })
  t.equal(malformed.statusCode, 401)
  t.equal(malformed.json().detail, 'The Bearer credentials are malformed', 'bad credentials of one alternative are what the answer says, when no other passes')
  t.equal(await status('/both', { 'x-key': 'k' }), 401, 'a requirement needs all its schemes')
  t.equal(await status('/both', { 'x-key': 'k', authorization: basic('user:secret') }), 200)
  t.equal(await status('/both', { 'x-key': 'k', authorization: basic('no-colon') }), 401, 'basic credentials are user:password')
  t.equal(await status('/query?api_key=k'), 200, 'an API key in the query')
  t.equal(await status('/query?other=k'), 401)
  t.equal(await status('/cookie', { cookie: 'session=s; other=1' }), 200, 'an API key in a cookie')
  t.equal(await status('/cookie', { cookie: 'other=1' }), 401)
  t.equal(await status('/scoped', { authorization: 'Bearer abc' }), 200, 'OAuth 2.0: a bearer token (the mock checks no scope)')
  t.equal(await status('/public'), 200, 'security: [] is public')
  t.equal(await status('/optional'), 200, 'an empty alternative makes credentials optional')
  t.equal(await status('/default'), 401, 'the document\'s default applies')
})

t.test('a service\'s own checks: each called with its scheme and the requirement\'s scopes; 401 and 403 as they refuse', async (t) => {
  const seen: string[] = []
  const checks: Checks = {
    'http:bearer': (_scheme, scopes) => (request, _reply, done) => {
      seen.push(`bearer [${scopes.join(' ')}]`)
      const header = request.headers.authorization
      if (header === undefined) return done(new MissingCredentialsError('Missing bearer token'))
      done(header === 'Bearer good' ? undefined : new UnauthorizedError('Invalid bearer token'))
    },
    apiKey: (scheme) => (request, _reply, done) => done(request.headers[String(scheme.name).toLowerCase()] === 'key' ? undefined : new MissingCredentialsError(`Missing ${scheme.name}`)),
    'http:basic': () => (_request, _reply, done) => done(new MissingCredentialsError('Missing basic')),
    oauth2: (_scheme, scopes) => (request, _reply, done) => done(request.headers.authorization === 'Bearer writer' ? undefined : new InsufficientScopeError(scopes.join(' ')))
  }
  const doc = structuredClone(document) as any
  delete doc.components.securitySchemes.queryKey
  delete doc.components.securitySchemes.cookieKey
  delete doc.paths['/query']
  delete doc.paths['/cookie']
  const { query, cookie, ...rest } = handlers
  const app = await engineApp(t, doc, rest, { checks })
  t.equal((await app.inject({ url: '/either', headers: { authorization: 'Bearer good' } })).statusCode, 200)
  t.equal((await app.inject({ url: '/either', headers: { 'x-key': 'key' } })).statusCode, 200, 'a missing bearer token lets the next alternative try')
  const wrong = await app.inject({ url: '/either', headers: { authorization: 'Bearer bad' } })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.json().detail, 'Invalid bearer token', 'a refused token is refused, whatever the other alternatives')
  const scoped = await app.inject({ url: '/scoped', headers: { authorization: 'Bearer reader' } })
  t.equal(scoped.statusCode, 403, 'a missing scope: 403')
  t.match(scoped.json().detail, /things:write/)
  t.match(seen, ['bearer []'], 'the bound check is given its requirement\'s scopes')
})
