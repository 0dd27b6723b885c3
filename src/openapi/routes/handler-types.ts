import type { operations } from '../../../generated/openapi.js'
import type { UploadedFile } from '../requests/bodies.ts'

// The one place that indexes the generated `operations` type. Handlers are typed from it,
// so a spec change that a handler no longer fits fails the compiler. Each type takes the
// operations of any document; the type fixtures (test/openapi/type-fixtures/) use one of their own.

/** What a body of any of the media types given is, as a handler gets it: a multipart file as an UploadedFile. */
type Content<T> = T extends { content: infer C } ? Uploaded<C[keyof C]> : never
type Uploaded<T> = T extends Blob | File ? UploadedFile : T extends object ? { [K in keyof T]: Uploaded<T[K]> } : T
type Part<Op, P extends string> = Op extends { parameters: Record<P, infer V> } ? V : never
type Responses<Op> = Op extends { responses: infer R } ? R : never
type Headers<R> = R extends { headers: infer H } ? Omit<H, '[name: string]'> & Record<string, string | number | string[]> : Record<string, string | number | string[]>

export interface HandlerRequest<Op> {
  body: Content<Op extends { requestBody?: infer B } ? NonNullable<B> : never>
  params: Part<Op, 'path'>
  query: Part<Op, 'query'>
  /** Every header, the declared ones typed. */
  headers: Part<Op, 'header'>
  cookies: Part<Op, 'cookie'>
}

/**
 * What a handler answers: one of the statuses the document declares, with its body; the headers
 * it sets, and the media type it answers in, where the answer has several (else the one the
 * client's Accept prefers).
 */
export type HandlerResult<Op> = {
  [S in keyof Responses<Op>]: { status: S, body: Content<Responses<Op>[S]>, headers?: Headers<Responses<Op>[S]>, contentType?: string }
}[keyof Responses<Op>]

export type OperationHandler<Op> = (request: HandlerRequest<Op>) => Promise<HandlerResult<Op>>

/** Exactly one handler per operationId of a document's `operations`. */
export type HandlersOf<Ops> = { [K in keyof Ops]: OperationHandler<Ops[K]> }

export type OperationId = keyof operations
/** The handler of one of this document's operations. */
export type Handler<K extends OperationId> = OperationHandler<operations[K]>
/** Exactly one handler per operationId in this document. */
export type Handlers = HandlersOf<operations>
