// TypeBox's builders one by one, not its Type object, so that a bundle holds only these.
import { Integer, Optional, String as StringType, Unsafe, type Static, type TInteger, type TObject, type TOptional, type TProperties, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox'

// What a layer declares of its configuration, beside its code: its variables as a JSON Schema
// (TypeBox, so the same declaration gives the static types), which of them are secrets, and the
// checks JSON Schema cannot say. The loader (load.ts) reads every section from one environment.

export type Env = Readonly<Record<string, string | undefined>>

/** Where a variable's value comes from. */
export type Source = 'default' | 'environment' | 'file' | 'unset'

export interface Reading<V> {
  /** The section's variables, checked by their schemas, with their defaults. */
  values: V
  sourceOf: (name: string) => Source
  /** Records a problem: the start stops, naming it with every other. Never put a secret in it. */
  problem: (message: string) => void
}

/** A section's variables as read: each checked by its schema, with its default. */
export type ValuesOf<P extends TProperties> = Static<TObject<P>>

export interface Section<P extends TProperties = TProperties, C = unknown> {
  /** The reference's heading for it. */
  title: string
  /** Markdown said after the section's table in the reference. */
  notes?: string
  /**
   * Each variable's type, bounds, default and description; one without a default is optional, and
   * its description may open with what unset means ("Unset: no metrics. …").
   */
  variables: P
  /** The variables whose values are never shown: each may also be read from the file `<NAME>_FILE` names. */
  secrets?: ReadonlyArray<keyof P & string>
  /** The checks JSON Schema cannot say, and the layer's own configuration from the checked values. */
  read: (reading: Reading<ValuesOf<P>>) => C
}

/** A section, its types inferred from its variables. */
export const section = <P extends TProperties, C>(declared: Section<P, C>): Section<P, C> => declared

interface Described<T> { default?: T, description: string }

/** A variable without a default: undefined when unset. */
export const optional = <T extends TSchema>(schema: T): TOptional<T> => Optional(schema) as TOptional<T>

/** An integer variable, bounded both ways. */
export const integer = (minimum: number, maximum: number, options: Described<number>): TInteger => Integer({ minimum, maximum, ...options })

/** Any string. */
export const string = (options: Described<string>): TString => StringType(options)

/** A string that is more than blanks. */
export const NON_BLANK = '\\S'
export const text = (options: Described<string>): TString => StringType({ pattern: NON_BLANK, ...options })

/**
 * What a variable's schema allows beyond its type, in words ("an integer from 0 to 65535", "one of
 * a, b"), each value as `quote` writes it: what a problem and the reference both say.
 */
export function allowed (schema: Record<string, any>, quote = (value: string): string => value): string | undefined {
  if (schema.type === 'integer') return `an integer from ${schema.minimum} to ${schema.maximum}`
  if (schema.enum !== undefined) return `one of ${schema.enum.map(quote).join(', ')}`
  return undefined
}

/** One of a few words. */
export const oneOf = <T extends string>(values: readonly T[], options: Described<T>): TUnsafe<T> => Unsafe<T>({ type: 'string', enum: values, ...options })
