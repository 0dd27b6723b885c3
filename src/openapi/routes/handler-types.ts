import type { operations } from '../../../generated/openapi.js'
import type { UploadedFile } from '../requests/bodies.ts'

// The one place that indexes the generated `operations` type. Handlers are typed from it,
// so a spec change that a handler no longer fits fails the compiler. Each type takes the
// operations of any document; the type fixtures (test/openapi/type-fixtures/) use one of their own.

/** What a body of any of the media types given is, as a handler gets it: a multipart file as an UploadedFile. */
type Content<T> = T extends { content: infer C } ? Uploaded<C[keyof C]> : never
type Uploaded<T> = T extends Blob | File ? UploadedFile : T extends object ? { [K in keyof T]: Uploaded<T[K]> } : T
/**
 * A group of parameters as a handler gets it, always an object: openapi-typescript writes a group
 * none of whose members is required as optional (`query?: { limit?: number }`); no group, never.
 */
type Part<Op, P extends string> = Op extends { parameters: infer Ps } ? P extends keyof Ps ? Exclude<Ps[P], undefined> : never : never
/** Header names as requests carry them to a handler: in lower case, whatever case the document writes. */
type Lowered<T> = [T] extends [never] ? never : { [K in keyof T as Lowercase<K & string>]: T[K] }
type Responses<Op> = Op extends { responses: infer R } ? R : never
type Headers<R> = R extends { headers: infer H } ? Omit<H, '[name: string]'> & Record<string, string | number | string[]> : Record<string, string | number | string[]>

export interface HandlerRequest<Op> {
  body: Content<Op extends { requestBody?: infer B } ? NonNullable<B> : never>
  params: Part<Op, 'path'>
  query: Part<Op, 'query'>
  /** Every header, the declared ones typed. */
  headers: Lowered<Part<Op, 'header'>>
  cookies: Part<Op, 'cookie'>
}

// The statuses a key of an operation's responses stands for, as the engine reads them (answers/
// responses.ts): a code, itself; a range (4XX), its codes that no code of their own takes; default,
// every status from 100 to 599 that no other key takes.
type Digit = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9
type Class = 1 | 2 | 3 | 4 | 5
type StatusesOf<C extends Class> = `${C}${Digit}${Digit}` extends `${infer N extends number}` ? N : never
type CodeOf<K> = K extends number ? K : K extends `${infer N extends number}` ? N : never
type RangeOf<K> = K extends `${infer C extends Class}${'XX' | 'xx'}` ? StatusesOf<C> : never
type StatusOf<R, K> = K extends 'default'
  ? Exclude<StatusesOf<Class>, CodeOf<keyof R> | RangeOf<keyof R>>
  : [RangeOf<K>] extends [never] ? CodeOf<K> : Exclude<RangeOf<K>, CodeOf<keyof R>>

/**
 * What a handler answers: a status the document declares (a code, or one that a range or default
 * stands for), with that answer's body, if it has one; the headers it sets, and the media type it answers in,
 * where the answer has several (else the one the client's Accept prefers).
 */
export type HandlerResult<Op> = {
  [S in keyof Responses<Op>]: { status: StatusOf<Responses<Op>, S>, headers?: Headers<Responses<Op>[S]>, contentType?: string } & BodyOf<Responses<Op>[S]>
}[keyof Responses<Op>]
/** An answer with content has a body of it; one without (a 204) has none. */
type BodyOf<R> = [Content<R>] extends [never] ? { body?: undefined } : { body: Content<R> }

export type OperationHandler<Op> = (request: HandlerRequest<Op>) => Promise<HandlerResult<Op>>

/** Exactly one handler per operationId of a document's `operations`. */
export type HandlersOf<Ops> = { [K in keyof Ops]: OperationHandler<Ops[K]> }

export type OperationId = keyof operations
/** The handler of one of this document's operations. */
export type Handler<K extends OperationId> = OperationHandler<operations[K]>
/** Exactly one handler per operationId in this document. */
export type Handlers = HandlersOf<operations>
