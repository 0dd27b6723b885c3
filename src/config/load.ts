import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import { readSecretFile } from './secret-file.ts'
import { allowed, NON_BLANK, type Env, type Section, type Source } from './section.ts'
import { likelyMeant } from './typos.ts'

// Reads the configuration of every section from one environment, as a pure function of it (and
// of the secret files it names): Ajv checks each variable that is set against its section's schema
// (types coerced from the environment's strings), the rest take their defaults, then each section makes its own
// configuration with the checks a schema cannot say. Every problem is collected, typos of declared
// names included, and thrown as one ConfigError that names them all.
// Ajv is called as env-schema (the engine of @fastify/env) calls it, without env-schema itself: at
// import, that validates its own options' schema against JSON Schema's meta-schema, about 23 ms of
// every start, and it reads process.env, which a pure function of its environment must not.

export type { Env } from './section.ts'
export type Sections = Record<string, Section<any, any>>
export type ConfigOf<S extends Sections> = { [K in keyof S]: ReturnType<S[K]['read']> }

export class ConfigError extends Error {
  constructor (problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

export interface Loaded<S extends Sections> {
  config: ConfigOf<S>
  /** Every declared variable's checked value (defaults included), and where it came from. */
  values: Record<string, unknown>
  sources: Map<string, Source>
}

/** The variable that holds a secret's file. */
export const fileOf = (name: string): string => `${name}_FILE`

/** Reads every section from `env`; throws one ConfigError listing every problem found. */
export function readConfig<S extends Sections> (sections: S, env: Env): Loaded<S> {
  const problems: string[] = []
  const variables = variablesOf(sections)
  const secrets = new Set(Object.values(sections).flatMap((section) => section.secrets ?? []))
  const declared = [...Object.keys(variables), ...[...secrets].map(fileOf)]

  const data: Record<string, string> = {}
  const sources = new Map<string, Source>()
  for (const name of Object.keys(variables)) {
    const file = secrets.has(name) ? env[fileOf(name)] : undefined
    if (file !== undefined && env[name] !== undefined) {
      problems.push(`set either ${name} or ${fileOf(name)}, not both`)
    } else if (file !== undefined) {
      try {
        data[name] = readSecretFile(file).replace(/\r?\n$/, '')
        sources.set(name, 'file')
      } catch (err) {
        problems.push(`${fileOf(name)} cannot be read: ${(err as Error).message}`)
      }
    } else if (env[name] !== undefined) {
      data[name] = env[name]
      sources.set(name, 'environment')
    }
    if (!sources.has(name)) sources.set(name, variables[name].default === undefined ? 'unset' : 'default')
  }
  for (const name of Object.keys(env)) {
    const meant = declared.includes(name) ? undefined : likelyMeant(name, declared)
    if (meant !== undefined) problems.push(`${name} is set, but no such variable is read: did you mean ${meant}?`)
  }

  const validate = validatorOf(sections, Object.keys(data))
  const values: Record<string, unknown> = { ...data }
  if (!validate(values)) {
    const wrong = new Set<string>()
    for (const error of validate.errors!) {
      const name = error.instancePath.slice(1)
      if (wrong.has(name)) continue
      wrong.add(name)
      problems.push(schemaProblem(name, variables[name], error, secrets.has(name) ? undefined : data[name]))
      delete values[name]
    }
    // Again without the wrong values (their defaults instead, below), so every section's own checks still run on the rest.
    validate(values)
  }
  for (const [name, schema] of Object.entries(variables)) {
    if (values[name] === undefined && schema.default !== undefined) values[name] = schema.default
  }

  const config: Record<string, unknown> = {}
  for (const [key, { read }] of Object.entries(sections)) {
    config[key] = read({ values, sourceOf: (name: string) => sources.get(name)!, problem: (message: string) => problems.push(message) })
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return { config: config as ConfigOf<S>, values, sources }
}

// A validator of the variables that are set, compiled when first read; a later read of the same
// names (SIGHUP's) reuses it. Only those: the rest take their defaults, which need no check, and
// compiling every variable's schema was a good part of a start (about 10 ms for forty).
const validators = new WeakMap<Sections, Map<string, ValidateFunction>>()
function validatorOf (sections: Sections, names: string[]): ValidateFunction {
  let bySet = validators.get(sections)
  if (bySet === undefined) validators.set(sections, bySet = new Map())
  const key = [...names].sort().join(',')
  let validate = bySet.get(key)
  if (validate === undefined) {
    // As env-schema's Ajv: every error, types coerced. Not checked against the meta-schema (its
    // compilation is tens of ms of a start): strict mode still refuses an unknown keyword, and
    // the tests read every section. Run once, its code need not be optimized.
    const ajv = new Ajv2020({ allErrors: true, coerceTypes: true, strict: true, validateSchema: false, code: { optimize: false } })
    const variables = variablesOf(sections)
    validate = ajv.compile({ type: 'object', properties: Object.fromEntries(names.map((name) => [name, variables[name]])) })
    bySet.set(key, validate)
  }
  return validate
}

/** Every section's variables, by name. */
const variablesOf = (sections: Sections): Record<string, any> => Object.assign({}, ...Object.values(sections).map((section) => section.variables))

/** What a variable must be, said from its schema; the value only when it is no secret. */
function schemaProblem (name: string, schema: Record<string, any>, error: ErrorObject, value: string | undefined): string {
  const got = value === undefined ? '' : `, got "${value}"`
  const must = allowed(schema)
  if (must !== undefined) return `${name} must be ${must}${got}`
  if (schema.pattern === NON_BLANK) return `${name} must not be empty`
  return `${name} ${error.message ?? 'is not valid'}${got}`
}
