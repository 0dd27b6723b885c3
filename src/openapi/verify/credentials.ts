import { namesCredential } from '../../http/credential-names.ts'
import type { OpenApiDocument } from '../document/document.ts'
import { schemeKind } from '../requests/security.ts'
import type { RouteSpec } from '../routes/routes.ts'

// What the verifier sends for an operation's security: the credentials its user gave (a bearer
// token, a user and password, API keys, headers of their own), in the place each scheme of the
// operation's requirement asks for them. Where none were given, a stand-in of the right form,
// which a mock takes and a real service refuses (then every answer is a 401, and the report says
// so). Each credential is a secret: a curl command shows it as the variable that holds it. Where
// the user gave credentials, a request is also sent with stand-ins in their place: a service that
// takes those checks that credentials are there, not that they are its own.

export interface GivenCredentials {
  /** For http bearer, OAuth 2.0 and OpenID Connect schemes. */
  bearer?: string
  /** user:password, for http basic schemes. */
  basic?: string
  /** For apiKey schemes: one key for all of them, or a key by scheme name. */
  apiKeys?: { all?: string, byScheme?: Record<string, string> }
  /** Sent with every request, as given (a header of a scheme the document does not describe). */
  headers?: Record<string, string>
}

/** A secret sent, and the shell variable a curl command names it by. */
export interface Secret { value: string, variable: string }

export interface Credentials { headers: Record<string, string>, query: string[], cookies: string[], secrets: Secret[] }

const STAND_IN = { bearer: 'verify-token', basic: 'user:password', apiKey: 'verify-key' }

/** The requirement the verifier meets: the first whose every scheme it has credentials for, else the first. */
function requirementOf (doc: OpenApiDocument, route: RouteSpec, given: GivenCredentials): Record<string, string[]> {
  const schemes: Record<string, any> = doc.components?.securitySchemes ?? {}
  const has = (name: string): boolean => {
    const kind = schemeKind(schemes[name] ?? {})
    if (kind === 'apiKey') return given.apiKeys?.byScheme?.[name] !== undefined || given.apiKeys?.all !== undefined
    if (kind === 'http:basic') return given.basic !== undefined
    return given.bearer !== undefined
  }
  return route.security.find((r) => Object.keys(r).every(has)) ?? route.security[0] ?? {}
}

/** True when the operation is public: no requirement, or an empty one among its alternatives. */
export const isPublic = (route: RouteSpec): boolean => route.security.length === 0 || route.security.some((r) => Object.keys(r).length === 0)

/** The credentials a request of the operation carries, and the secrets among them. */
export function credentialsFor (doc: OpenApiDocument, route: RouteSpec, given: GivenCredentials): Credentials {
  const out: Credentials = { headers: {}, query: [], cookies: [], secrets: [] }
  const secret = (value: string, variable: string): string => {
    if (!out.secrets.some((s) => s.value === value)) out.secrets.push({ value, variable })
    return value
  }
  const schemes: Record<string, any> = doc.components?.securitySchemes ?? {}
  for (const name of isPublic(route) ? [] : Object.keys(requirementOf(doc, route, given))) {
    const scheme = schemes[name] ?? {}
    const kind = schemeKind(scheme)
    if (kind === 'mutualTLS') continue // a connection's, not a request's
    if (kind === 'apiKey') {
      const key = given.apiKeys?.byScheme?.[name] ?? given.apiKeys?.all
      const value = key === undefined ? STAND_IN.apiKey : secret(key, 'VERIFY_API_KEY')
      const where = String(scheme.name)
      if (scheme.in === 'query') out.query.push(`${encodeURIComponent(where)}=${encodeURIComponent(value)}`)
      else if (scheme.in === 'cookie') out.cookies.push(`${where}=${encodeURIComponent(value)}`)
      else out.headers[where.toLowerCase()] ??= value
    } else if (kind === 'http:basic') {
      const pair = given.basic ?? STAND_IN.basic
      const encoded = Buffer.from(pair).toString('base64')
      out.headers.authorization = `Basic ${given.basic === undefined ? encoded : secret(encoded, 'VERIFY_BASIC')}`
    } else if (kind.startsWith('http:') && kind !== 'http:bearer') {
      // A scheme of its own (Digest, say): its credentials come as a header the user gives.
      out.headers.authorization ??= `${scheme.scheme} ${STAND_IN.bearer}`
    } else {
      out.headers.authorization = `Bearer ${given.bearer === undefined ? STAND_IN.bearer : secret(given.bearer, 'VERIFY_BEARER')}`
    }
  }
  // The user's own headers last: one of them may be the credentials a scheme above stood in for.
  for (const [i, [name, value]] of Object.entries(given.headers ?? {}).entries()) out.headers[name.toLowerCase()] = secret(value, `VERIFY_HEADER_${i + 1}`)
  return out
}

// Headers that carry credentials whatever they hold: a session in a cookie, a token.
const CARRIERS = new Set(['authorization', 'proxy-authorization', 'cookie'])

/**
 * Credentials of the right form that are not the user's: each scheme's stand-in, and the user's
 * own headers but those that carry a credential (Authorization, Cookie, X-Api-Key). None
 * where the user gave no credentials: the stand-ins are what every request already carries.
 */
export function wrongCredentialsFor (doc: OpenApiDocument, route: RouteSpec, given: GivenCredentials): Credentials | undefined {
  const headers = Object.fromEntries(Object.entries(given.headers ?? {}).filter(([name]) => !CARRIERS.has(name.toLowerCase()) && !namesCredential(name)))
  const wrong = credentialsFor(doc, route, { headers })
  const kept = new Set(wrong.secrets.map((s) => s.value))
  const leftOut = credentialsFor(doc, route, given).secrets.filter((s) => !kept.has(s.value)).map((s) => s.value)
  // Nothing of the user's left out, or a stand-in that is the user's own: no request tells the two apart.
  const sent = [...Object.values(wrong.headers), ...wrong.query, ...wrong.cookies]
  return leftOut.length === 0 || sent.some((value) => leftOut.some((secret) => value.includes(secret))) ? undefined : wrong
}
