import { readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import type { Test } from 'tap'
import { buildMock } from '../../src/cli/mock-app.ts'
import { loadConfig } from '../../src/config.ts'
import { kindOf } from '../../src/openapi/requests/bodies.ts'
import type { LoadedDocument, OpenApiDocument } from '../../src/openapi/document/document.ts'
import type { MediaSpec, RouteSpec } from '../../src/openapi/routes/routes.ts'
import { verify } from '../../src/openapi/verify/verifier.ts'
import { injectTransport } from './inject-transport.ts'

// ReadMe's example documents (@readme/oas-examples, its OpenAPI 3.0 and 3.1 folders), written to
// show what OpenAPI can say, each booted in the mock: every operation is served, or left out for a
// reason docs/your-own-api.md lists; a valid request made from the document is answered as it
// declares, by the verifier's checks; and requests with one fault each are refused, 400, 401
// without credentials, 415 in an undeclared media type. The whole corpus runs in
// readme-examples.system.test.ts, which also names what each document exercises (featuresOf);
// npm test runs the part of it that exercises all of that (readme-examples.test.ts).

export const EXAMPLES = dirname(createRequire(import.meta.url).resolve('@readme/oas-examples/package.json'))
const config = loadConfig({ LOG_LEVEL: 'silent', VALIDATE_RESPONSES: 'true' })

/** The phrases of the refusals the docs list ("What the engine refuses"): every operation left out must say one. */
export const REFUSALS = [
  'has a path that no request can have',
  'twice in its path',
  'in its path, with no path parameter to say what it is',
  'which components.securitySchemes does not define'
]

// The operations whose schemas no value can satisfy: a valid request cannot be made, by anyone.
const UNSATISFIABLE = new Set([
  'POST /direct', // a required property refers to its own schema, without end
  'PATCH /embedded-discriminator', // both branches match any object the discriminator allows
  'POST /anything/one-of-object', // oneOf two object schemas that take the same objects
  'POST /anything/one-of-object-ref',
  'POST /one-of-complex',
  'PUT /anything/strings', // a required property ("enum (with example) *required") no branch can hold, of schema-enums
  'PUT /anything/quirks/polymorphism', // allOf a string and an integer
  'PATCH /anything/quirks/polymorphism'
])

const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name)
  return statSync(path).isDirectory() ? files(path) : name.endsWith('.json') ? [path] : []
})

/** npm test's part of the corpus: documents that, together, exercise everything the whole corpus does. */
export const EVERYDAY = [
  '3.0/json/file-uploads.json',
  '3.0/json/parameters-common.json',
  '3.0/json/polymorphism.json',
  '3.0/json/response-examples.json',
  '3.0/json/response-http-behavior.json',
  '3.0/json/security-multiple.json',
  '3.0/json/security.json',
  '3.0/json/uspto.json',
  '3.1/json/parameters-style.json',
  '3.1/json/schema-types.json',
  '3.1/json/schema-validation-local.json',
  '3.1/json/security.json',
  '3.1/json/train-travel.json'
]

/** Every JSON document of the 3.0 and 3.1 folders, by its name in the package (3.0/json/petstore.json). */
export const exampleNames = (): string[] => [...files(join(EXAMPLES, '3.0/json')), ...files(join(EXAMPLES, '3.1/json'))].map((file) => relative(EXAMPLES, file))

// What the mock answers each kind of invalid request with.
const REFUSED_WITH: Record<string, number> = { 'no credentials': 401, 'undeclared media type': 415, 'undeclared method': 405 }

// Answers that keep the document's word, and that a check names all the same, by design:
// - an operation that declares no success (its only answers are 4xx or 5xx ones) is answered with
//   one, which not_a_server_error or positive_data_acceptance name;
// - readme-legacy.json's errors are oneOfs of schemas that take the same values (its 401's,
//   error_APIKEY_EMPTY and error_APIKEY_NOTFOUND, each baseError with a default): no body is valid
//   against them, so a refusal comes as problem details, in a type the operation does not declare.
const ONLY_ERRORS_NAMED_BY = new Set(['not_a_server_error', 'positive_data_acceptance'])
const NO_VALID_ANSWER: Record<string, RegExp> = { '3.0/json/readme-legacy.json': /^4\d\d in application\/problem\+json, which the operation does not declare for it/ }

/** Boots the mock of `loaded` and verifies it (openapi/verify/): answers what the document exercises. */
export async function exercise (t: Test, name: string, loaded: LoadedDocument): Promise<Set<string>> {
  const version = `OpenAPI ${String(loaded.document.openapi).slice(0, 3)}`
  const { app, document, routes, refused } = await buildMock(config, loaded, name)
  t.teardown(() => app.close())
  for (const { problem } of refused) t.ok(REFUSALS.some((phrase) => problem.includes(phrase)), `left out for a listed reason: ${problem}`)
  const { operations } = await verify(document, injectTransport(app), { seed: 1, generated: 1 })
  for (const operation of operations) {
    const named = `${operation.method} ${operation.path}`
    const route = routes.find((r) => r.method === operation.method && r.path === operation.path)!
    const onlyErrors = route.responses.length > 0 && route.responses.every((r) => /^[45]/.test(r.status))
    const found = operation.violations.filter((v) => !(onlyErrors && ONLY_ERRORS_NAMED_BY.has(v.check)) && !(NO_VALID_ANSWER[name]?.test(v.detail) ?? false))
    t.same(found.map((v) => `${v.check}: ${v.detail}`), [], `${named}: nothing found${found.length < operation.violations.length ? ' but what the document asks for (above)' : ''}`)
    const unbuildable = operation.notes.filter((note) => note.startsWith('no valid request could be made'))
    if (unbuildable.length > 0) t.ok(UNSATISFIABLE.has(named), `${named}: ${unbuildable[0]}`)
    else t.ok(operation.sent.some((s) => s.kind === 'valid'), `${named}: valid requests sent`)
    for (const sent of operation.sent.filter((s) => s.fault !== undefined)) t.equal(sent.status, REFUSED_WITH[sent.fault!] ?? 400, `${named}, ${sent.fault}: refused`)
  }
  return featuresOf(document, routes, refused.map(({ problem }) => problem), version)
}

const media = ({ type }: MediaSpec): string => `${kindOf(type)}${type.includes('*') ? ', a range' : ''}`

/**
 * What a document exercises of the engine, in words: its version; each parameter's location,
 * style, explode and shape; each body's and answer's media type, as the engine reads it; answers
 * by range and by default; each kind of security scheme, and requirements that are alternatives,
 * several schemes at once or optional; the schema keywords and formats it uses (a discriminator
 * among them); and each reason an operation is left out.
 */
function featuresOf (document: OpenApiDocument, routes: RouteSpec[], refusals: string[], version: string): Set<string> {
  const features = new Set([version])
  const schemes: Record<string, any> = document.components?.securitySchemes ?? {}
  for (const route of routes) {
    for (const p of route.parameters) {
      features.add(p.contentType !== undefined ? `${p.in} parameter given by content` : `${p.in} parameter, ${p.style}${p.explode ? ' exploded' : ''}, ${p.shape}`)
    }
    for (const m of route.body?.media ?? []) features.add(`request body: ${media(m)}`)
    for (const m of route.responses.flatMap((r) => r.media)) features.add(`answer: ${media(m)}`)
    for (const { status } of route.responses) if (!/^\d+$/.test(status)) features.add(`answer: ${status === 'default' ? 'default' : 'a range of statuses'}`)
    if (route.security.length > 1) features.add('security: alternatives')
    for (const requirement of route.security) {
      const names = Object.keys(requirement)
      if (names.length === 0) features.add('security: optional')
      if (names.length > 1) features.add('security: several schemes at once')
      for (const name of names) {
        const scheme = schemes[name] ?? {}
        features.add(`security: ${scheme.type}${scheme.type === 'http' ? ` ${String(scheme.scheme).toLowerCase()}` : scheme.type === 'apiKey' ? ` in ${scheme.in}` : ''}`)
      }
    }
  }
  for (const keyword of keywordsOf(document)) features.add(keyword)
  for (const phrase of REFUSALS) if (refusals.some((problem) => problem.includes(phrase))) features.add(`left out: ${phrase}`)
  return features
}

// Schema keywords the engine gives a meaning of its own to, beyond a type's.
const KEYWORDS = new Set(['discriminator', 'oneOf', 'anyOf', 'allOf', 'not', 'readOnly', 'writeOnly', 'const', 'enum', 'pattern',
  'additionalProperties', 'patternProperties', 'prefixItems', 'minItems', 'maxLength', 'minimum', 'multipleOf', 'default'])

/** The schema keywords of KEYWORDS that the document uses, and each format it names. */
function keywordsOf (node: unknown, found = new Set<string>(), seen = new Set<unknown>()): Set<string> {
  if (node === null || typeof node !== 'object' || seen.has(node)) return found
  seen.add(node)
  for (const [key, value] of Object.entries(node)) {
    if (KEYWORDS.has(key)) found.add(`schema: ${key}`)
    if (key === 'format' && typeof value === 'string') found.add(`schema: format ${value}`)
    keywordsOf(value, found, seen)
  }
  return found
}
