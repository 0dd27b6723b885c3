import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify'
import { MissingCredentialsError, OWN_CODE_PREFIX } from '../../errors.ts'
import { DocumentError } from '../document/document-error.ts'
import type { OpenApiDocument } from '../document/document.ts'
import type { RouteSpec } from '../routes/routes.ts'

// Security as the document says it: an operation's requirements are alternatives, any one of
// which will do, and each requirement lists schemes that must all pass, with their scopes. Each
// kind of scheme is bound in code to a check (the service binds its static tokens and JWTs to
// http bearer; the mock binds a check of presence and form to every kind): a scheme the document
// uses with no check bound stops the start, never an open door. A request that passes no
// alternative is answered with the refusal of the first it presented credentials for (401 for
// bad ones, 403 for missing scopes), or, when it presented none, 401 naming what would do.

/** A Security Scheme Object, as written. */
export type SecurityScheme = Record<string, any>

/**
 * A check of one kind of scheme: given the scheme and the scopes a requirement lists, the hook
 * that lets a request through or refuses it. It refuses a request that carries none of the
 * scheme's credentials with MissingCredentialsError; any other error is a refusal of what it carries.
 */
export type SchemeCheck = (scheme: SecurityScheme, scopes: string[]) => onRequestHookHandler

/** The checks bound in code, by kind: http:bearer, http:basic, apiKey, oauth2, openIdConnect, mutualTLS; http:* for any other http scheme. */
export type Checks = Record<string, SchemeCheck>

const MISSING = `${OWN_CODE_PREFIX}MISSING_CREDENTIALS`
const CHALLENGE = 'www-authenticate'

/** A scheme's kind: its type, and for http its scheme in lower case (http:bearer). */
export function schemeKind (scheme: SecurityScheme): string {
  return scheme.type === 'http' ? `http:${String(scheme.scheme).toLowerCase()}` : String(scheme.type)
}

/** What a scheme asks a client for, in words. */
export function describe (scheme: SecurityScheme): string {
  switch (schemeKind(scheme)) {
    case 'http:bearer': return 'a bearer token (Authorization: Bearer …)'
    case 'http:basic': return 'a user and password (Authorization: Basic …)'
    case 'apiKey': return `an API key in the ${scheme.name} ${scheme.in === 'query' ? 'query parameter' : scheme.in}`
    case 'oauth2':
    case 'openIdConnect': return 'an OAuth 2.0 access token (Authorization: Bearer …)'
    case 'mutualTLS': return 'a client certificate'
    default: return `Authorization: ${scheme.scheme} …`
  }
}

interface Bound { name: string, scheme: SecurityScheme, hook: onRequestHookHandler }

/** Runs hooks one after another; calls back with the first refusal, or none. */
function runAll (hooks: Bound[], request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, i = 0): void {
  if (i === hooks.length) return done()
  hooks[i].hook.call(request.server, request, reply, (error?: Error) => error === undefined ? runAll(hooks, request, reply, done, i + 1) : done(error))
}

/** The names of the document's API keys: in headers (lowercase) and in the query. */
export function apiKeyNames (document: OpenApiDocument): { headers: string[], query: string[] } {
  const schemes = Object.values<any>(document.components?.securitySchemes ?? {}).filter((s) => s?.type === 'apiKey')
  return {
    headers: schemes.filter((s) => s.in === 'header').map((s) => String(s.name).toLowerCase()),
    query: schemes.filter((s) => s.in === 'query').map((s) => String(s.name))
  }
}

/** What an operation's requirements name that the document does not define, as a refusal says it; undefined when every scheme they name is defined. */
export function undefinedSchemeOf (route: RouteSpec, document: OpenApiDocument): string | undefined {
  const schemes: Record<string, SecurityScheme> = document.components?.securitySchemes ?? {}
  const name = route.security.flatMap((requirement) => Object.keys(requirement ?? {})).find((name) => schemes[name] === undefined)
  return name === undefined ? undefined : `requires security scheme "${name}", which components.securitySchemes does not define`
}

/**
 * The hooks an operation's requests pass, checking its requirements: none for a public one; for
 * one requirement, each scheme's check in turn; for alternatives, one hook that tries each.
 */
export function securityHooks (route: RouteSpec, document: OpenApiDocument, checks: Checks, file: string): onRequestHookHandler[] {
  const schemes: Record<string, SecurityScheme> = document.components?.securitySchemes ?? {}
  // security: [] or an empty alternative, {}: public.
  if (route.security.length === 0 || route.security.some((requirement) => Object.keys(requirement ?? {}).length === 0)) return []
  const undefinedScheme = undefinedSchemeOf(route, document)
  if (undefinedScheme !== undefined) throw new DocumentError(file, route.pointer, undefinedScheme)
  const alternatives: Bound[][] = route.security.map((requirement) => Object.entries(requirement).map(([name, scopes]) => {
    const scheme = schemes[name]
    const kind = schemeKind(scheme)
    const check = checks[kind] ?? (kind.startsWith('http:') ? checks['http:*'] : undefined)
    if (check === undefined) throw new DocumentError(file, route.pointer, `requires security scheme "${name}" (${kind}), which no check in this service is bound to`)
    return { name, scheme, hook: check(scheme, [...new Set(Array.isArray(scopes) ? scopes : [])].sort()) }
  }))
  if (alternatives.length === 1) return alternatives[0].map(({ hook }) => hook)

  // Each alternative once, where a document lists one again (xtrf's, four times).
  const wanted = [...new Set(alternatives.map((alternative) => alternative.map(({ name, scheme }) => `${describe(scheme)} (${name})`).join(' with ')))].join(', or ')
  return [function security (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    let refusal: { error: Error, challenge: unknown } | undefined
    const challenges: unknown[] = []
    const next = (i: number): void => {
      if (i === alternatives.length) {
        if (refusal !== undefined) {
          reply.header(CHALLENGE, refusal.challenge)
          return done(refusal.error)
        }
        // Each http scheme's challenge: one header, or one line each (RFC 9110 allows both).
        const offered = challenges.flat().filter((c) => c !== undefined)
        if (offered.length > 0) reply.header(CHALLENGE, offered.length === 1 ? offered[0] : offered)
        return done(new MissingCredentialsError(`Missing credentials: send ${wanted}`))
      }
      runAll(alternatives[i], request, reply, (error) => {
        if (error === undefined) {
          reply.removeHeader(CHALLENGE)
          return done()
        }
        const challenge = reply.getHeader(CHALLENGE)
        reply.removeHeader(CHALLENGE)
        if ((error as { code?: string }).code === MISSING) challenges.push(challenge)
        else refusal ??= { error, challenge }
        next(i + 1)
      })
    }
    next(0)
  }]
}
