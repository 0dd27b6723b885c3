import type { operations } from '../../generated/openapi.js'

// The one place that indexes the generated `operations` type. Handlers are typed from it,
// so a spec change that a handler no longer fits fails the compiler.

export type OperationId = keyof operations
type Operation<K extends OperationId> = operations[K]
type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Part<K extends OperationId, P extends string> = Operation<K> extends { parameters: Record<P, infer V> } ? V : never

export interface HandlerRequest<K extends OperationId> {
  body: JsonContent<Operation<K>['requestBody']>
  params: Part<K, 'path'>
  query: Part<K, 'query'>
  headers: Part<K, 'header'>
}

type Responses<K extends OperationId> = Operation<K>['responses']

/** What a handler answers: one of the statuses the document declares, with its body. */
export type HandlerResult<K extends OperationId> = {
  [S in keyof Responses<K>]: { status: S, body: JsonContent<Responses<K>[S]> }
}[keyof Responses<K>]

export type Handler<K extends OperationId> = (request: HandlerRequest<K>) => Promise<HandlerResult<K>>

/** Exactly one handler per operationId in the document. */
export type Handlers = { [K in OperationId]: Handler<K> }
