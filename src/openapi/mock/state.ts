// What the stateful mock remembers: each collection's items by key, in memory and bounded. A
// collection holds at most MAX_ITEMS items and the whole state MAX_BYTES of their JSON; past
// either, the oldest written is dropped first, so a flood of creates keeps memory flat. An item is
// a frozen value: a change writes a new one, so a request never sees half of another's change
// (every change is made whole between two awaits). Its answers, once shaped, are kept beside it.

import { jsonText } from '../../http/json-body.ts'

export const MAX_ITEMS = 1000
export const MAX_BYTES = 64 * 1024 * 1024
/** Collections under parents (each customer's addresses): the oldest made is dropped past this many. */
export const MAX_COLLECTIONS = 10_000

export interface Item {
  readonly value: Readonly<Record<string, unknown>>
  /** Its JSON's length: what it counts against MAX_BYTES. */
  readonly bytes: number
  /** Each answer made of it (its value and JSON), by the schema it is shaped for; null where it cannot be. */
  readonly answers: WeakMap<object, { value: unknown, text: string } | null>
}

export class State {
  readonly #collections = new Map<string, Map<string, Item>>()
  /** Every item by its collection and key, oldest written first: what is dropped first. */
  readonly #written = new Map<string, { collection: Map<string, Item>, key: string }>()
  #bytes = 0
  readonly #maxItems: number
  readonly #maxBytes: number

  constructor ({ maxItems = MAX_ITEMS, maxBytes = MAX_BYTES } = {}) {
    this.#maxItems = maxItems
    this.#maxBytes = maxBytes
  }

  /** The collection named `scope` (a resource and its parents' values); made, with `seed`'s items, when first asked for. */
  collection (scope: string, seed: () => Array<[string, Record<string, unknown>]>): Map<string, Item> {
    let collection = this.#collections.get(scope)
    if (collection === undefined) {
      if (this.#collections.size >= MAX_COLLECTIONS) {
        const [oldest, items] = this.#collections.entries().next().value!
        for (const key of [...items.keys()]) this.delete(oldest, items, key)
        this.#collections.delete(oldest)
      }
      this.#collections.set(scope, collection = new Map())
      for (const [key, value] of seed()) this.put(scope, collection, key, value)
    }
    return collection
  }

  /** Writes an item, the newest: the oldest dropped past the bounds. */
  put (scope: string, collection: Map<string, Item>, key: string, value: Record<string, unknown>): Item {
    this.delete(scope, collection, key)
    const kept = frozenData(value) as Record<string, unknown>
    const item: Item = { value: kept, bytes: jsonText(kept).length, answers: new WeakMap() }
    collection.set(key, item)
    this.#written.set(`${scope}\0${key}`, { collection, key })
    this.#bytes += item.bytes
    while (collection.size > this.#maxItems) this.delete(scope, collection, collection.keys().next().value!)
    for (const [id, oldest] of this.#written) {
      if (this.#bytes <= this.#maxBytes) break
      this.#written.delete(id)
      this.#bytes -= oldest.collection.get(oldest.key)?.bytes ?? 0
      oldest.collection.delete(oldest.key)
    }
    return item
  }

  delete (scope: string, collection: Map<string, Item>, key: string): boolean {
    const item = collection.get(key)
    if (item === undefined) return false
    collection.delete(key)
    this.#written.delete(`${scope}\0${key}`)
    this.#bytes -= item.bytes
    return true
  }

  /** Forgets everything: each collection starts again from the document's examples. */
  reset (): void {
    this.#collections.clear()
    this.#written.clear()
    this.#bytes = 0
  }

  /** How much is held: collections, items and their bytes. */
  size (): { collections: number, items: number, bytes: number } {
    return { collections: this.#collections.size, items: this.#written.size, bytes: this.#bytes }
  }
}

/** A frozen copy of a request's values as JSON data: a multipart file's bytes as their text. */
function frozenData (value: unknown): unknown {
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString()
  if (Array.isArray(value)) return Object.freeze(value.map(frozenData))
  if (value !== null && typeof value === 'object') return Object.freeze(Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, frozenData(inner)])))
  return value
}
