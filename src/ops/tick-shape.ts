import { executionAsyncResource } from 'node:async_hooks'

// process.nextTick queues each callback in an object literal of Node's. V8 keeps that literal's
// shape (its hidden class) only while some such object is alive, and the literal's inline caches
// remember each shape they meet. A start-up whose full collections fall while no callback is
// queued drops the shape and makes it again, and past four shapes those caches give up for good:
// every nextTick (some five a request, in Node's streams and HTTP) then sets its properties through
// the runtime, about 0.35 µs more each, 2.5 µs a create (docs/performance.md, "nextTick's shape").
// Which start-ups it hits is a matter of timing: here, traces on without metrics, on Node 26.
// One such object kept from the start keeps the shape alive.
const kept: object[] = []

/** Keeps one of nextTick's queued callbacks (the resource it runs as) for the life of the process. */
export function keepTickShape (): void {
  process.nextTick(() => kept.push(executionAsyncResource()))
}
