import type { operations } from '../../generated/openapi.js'

// The one place that indexes the generated `operations` type. Handlers are typed from it,
// so a spec change that a handler no longer fits fails the compiler. Each type takes the
// operations of any document; the type fixtures (test/openapi/type-fixtures/) use one of their own.

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Part<Op, P extends string> = Op extends { parameters: Record<P, infer V> } ? V : never
type Responses<Op> = Op extends { responses: infer R } ? R : never

export interface HandlerRequest<Op> {
  body: JsonContent<Op extends { requestBody?: infer B } ? NonNullable<B> : never>
  params: Part<Op, 'path'>
  query: Part<Op, 'query'>
  headers: Part<Op, 'header'>
}

/** What a handler answers: one of the statuses the document declares, with its body. */
export type HandlerResult<Op> = {
  [S in keyof Responses<Op>]: { status: S, body: JsonContent<Responses<Op>[S]> }
}[keyof Responses<Op>]

export type OperationHandler<Op> = (request: HandlerRequest<Op>) => Promise<HandlerResult<Op>>

/** Exactly one handler per operationId of a document's `operations`. */
export type HandlersOf<Ops> = { [K in keyof Ops]: OperationHandler<Ops[K]> }

export type OperationId = keyof operations
/** The handler of one of this document's operations. */
export type Handler<K extends OperationId> = OperationHandler<operations[K]>
/** Exactly one handler per operationId in this document. */
export type Handlers = HandlersOf<operations>
