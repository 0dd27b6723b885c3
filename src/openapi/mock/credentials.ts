import { parseCookie } from 'cookie'
import type { onRequestHookHandler } from 'fastify'
import { MissingCredentialsError, UnauthorizedError } from '../../errors.ts'
import type { Checks, SchemeCheck, SecurityScheme } from '../requests/security.ts'

// The mock's checks, one for every kind of scheme: a credential must be there, in the form its
// scheme gives it, and nothing more is known of it; no token is verified and no scope is checked.
// An operation's requirements still apply as the service applies them (security.ts): the right
// credentials, for one of its alternatives, or 401. Mutual TLS is a connection's, not a request's:
// it is taken as given.

// RFC 6750's b64token and RFC 7617's base64 credentials.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i
const BASIC = /^basic +([A-Za-z0-9+/]+=*)$/i

/** Refuses a request whose Authorization is not `scheme token`, in the form `token` must have. */
function authorization (scheme: string, form: RegExp, wellFormed: (token: string) => boolean = () => true): onRequestHookHandler {
  return (request, reply, done) => {
    const header = request.headers.authorization
    if (header === undefined || !header.toLowerCase().startsWith(scheme.toLowerCase())) {
      reply.header('www-authenticate', scheme)
      return done(new MissingCredentialsError(`Missing credentials: send Authorization: ${scheme} …`))
    }
    const token = form.exec(header)?.[1]
    if (token === undefined || !wellFormed(token)) return done(new UnauthorizedError(`The ${scheme} credentials are malformed`))
    done()
  }
}

const presence = (what: string, present: (request: Parameters<onRequestHookHandler>[0]) => boolean): onRequestHookHandler => (request, _reply, done) =>
  done(present(request) ? undefined : new MissingCredentialsError(`Missing credentials: send ${what}`))

const apiKey: SchemeCheck = (scheme: SecurityScheme) => {
  const name = String(scheme.name)
  switch (scheme.in) {
    case 'header': return presence(`the API key in the ${name} header`, (request) => (request.headers[name.toLowerCase()] ?? '') !== '')
    case 'query': return presence(`the API key in the ${name} query parameter`, (request) => (new URLSearchParams(request.url.split('?')[1] ?? '').get(name) ?? '') !== '')
    default: return presence(`the API key in the ${name} cookie`, (request) => (parseCookie(request.headers.cookie ?? '')[name] ?? '') !== '')
  }
}

const bearer: SchemeCheck = () => authorization('Bearer', BEARER)

/** Checks of presence and form for each kind of scheme; http:* for an http scheme with none of its own (Digest: `Authorization: Digest …`). */
export const credentialChecks: Checks = {
  'http:bearer': bearer,
  'http:basic': () => authorization('Basic', BASIC, (token) => Buffer.from(token, 'base64').toString('utf8').includes(':')),
  'http:*': (scheme) => authorization(String(scheme.scheme), /^\S+ +(\S.*)$/),
  apiKey,
  oauth2: bearer,
  openIdConnect: bearer,
  mutualTLS: () => (_request, _reply, done) => done()
}
