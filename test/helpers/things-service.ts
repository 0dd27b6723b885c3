import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Test } from 'tap'
import { answer, serveText } from './hand-served.ts'

// A service written by hand on node:http, nothing of the engine in it, whose document (THINGS)
// declares no links: things created, read, patched, replaced and deleted, books and labels on
// shelves (a book refused with 404 on a shelf that is not there, a label with 422), loans and
// reviews, whose bodies name their shelf (refused with 422 too), and gadgets, put under a key the
// client chooses (PUT /gadgets/{sku}). Kept to its word unless told to break it in one way between
// requests (a SequenceFault, a GadgetFault): the verifier's sequences must name each.

const thing = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', minimum: 1, readOnly: true }, name: { type: 'string', minLength: 1, maxLength: 20 }, colour: { type: 'string', enum: ['red', 'green', 'blue'] } }, additionalProperties: false }
const write = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 20 }, colour: { type: 'string', enum: ['red', 'green', 'blue'] } }, additionalProperties: false }
const change = { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 20 }, colour: { type: 'string', enum: ['red', 'green', 'blue'] } }, additionalProperties: false, minProperties: 1 }
const book = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer', minimum: 1, readOnly: true }, title: { type: 'string', minLength: 1 } } }
const shelf = { type: 'object', required: ['id', 'room'], properties: { id: { type: 'integer', minimum: 1, readOnly: true }, room: { type: 'string', minLength: 1 } } }
const label = { type: 'object', required: ['shelfId', 'text'], properties: { shelfId: { type: 'integer' }, text: { type: 'string' } } }
const review = { type: 'object', required: ['id', 'shelfId', 'stars'], properties: { id: { type: 'integer', minimum: 1, readOnly: true }, shelfId: { type: 'integer', minimum: 1, example: 987654 }, stars: { type: 'integer', minimum: 1, maximum: 5 } } }
const loan = { type: 'object', required: ['shelfId', 'reader'], properties: { shelfId: { type: 'integer' }, reader: { type: 'string' } } }
const SKU = '^[A-Z]{3}-[0-9]{3}$'
const gadget = { type: 'object', required: ['sku', 'label'], properties: { sku: { type: 'string', pattern: SKU, readOnly: true }, label: { type: 'string', minLength: 1, maxLength: 20 } } }
const error = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } }
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } })
const id = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'integer', minimum: 1 } })
const notFound = { description: 'not there', ...json(error) }
const bad = { description: 'bad request', ...json(error) }
const unsupported = { description: 'not JSON', ...json(error) }

export const THINGS = {
  openapi: '3.1.0',
  info: { title: 'Things', version: '1.0.0' },
  paths: {
    '/things': { post: { operationId: 'addThing', requestBody: { required: true, ...json(write) }, responses: { 201: { description: 'added', headers: { Location: { schema: { type: 'string' } } }, ...json(thing) }, 400: bad, 415: unsupported } } },
    '/things/{id}': {
      parameters: [id('id')],
      get: { operationId: 'getThing', responses: { 200: { description: 'the thing', ...json(thing) }, 400: bad, 404: notFound } },
      patch: { operationId: 'changeThing', requestBody: { required: true, ...json(change) }, responses: { 200: { description: 'changed', ...json(thing) }, 400: bad, 404: notFound, 415: unsupported } },
      put: { operationId: 'replaceThing', requestBody: { required: true, ...json(write) }, responses: { 200: { description: 'replaced', ...json(thing) }, 201: { description: 'made', ...json(thing) }, 400: bad, 415: unsupported } },
      delete: { operationId: 'deleteThing', responses: { 204: { description: 'deleted' }, 400: bad, 404: notFound } }
    },
    '/shelves': { post: { operationId: 'addShelf', requestBody: { required: true, ...json({ type: 'object', required: ['room'], properties: { room: { type: 'string', minLength: 1 } } }) }, responses: { 201: { description: 'added', ...json(shelf) }, 400: bad, 415: unsupported } } },
    '/shelves/{shelfId}': { get: { operationId: 'getShelf', parameters: [id('shelfId')], responses: { 200: { description: 'the shelf', ...json(shelf) }, 400: bad, 404: notFound } } },
    '/shelves/{shelfId}/books': { post: { operationId: 'addBook', parameters: [id('shelfId')], requestBody: { required: true, ...json({ type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 } } }) }, responses: { 201: { description: 'added', ...json(book) }, 400: bad, 404: notFound, 415: unsupported } } },
    // Outside every chain: a label names its shelf, and is refused (422) on a shelf that is not there.
    '/shelves/{shelfId}/labels': { post: { operationId: 'labelShelf', parameters: [{ ...id('shelfId'), example: 987654 }], requestBody: { required: true, ...json({ type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1 } } }) }, responses: { 201: { description: 'labelled', ...json(label) }, 400: bad, 415: unsupported, 422: { description: 'no such shelf', ...json(error) } } } },
    // Outside every chain too: a loan's body names its shelf ({"shelfId": …}), refused (422) when it is not there.
    '/loans': { post: { operationId: 'lendFromShelf', requestBody: { required: true, ...json({ type: 'object', required: ['shelfId', 'reader'], properties: { shelfId: { type: 'integer', minimum: 1, example: 987654 }, reader: { type: 'string', minLength: 1 } } }) }, responses: { 201: { description: 'lent', ...json(loan) }, 400: bad, 415: unsupported, 422: { description: 'no such shelf', ...json(error) } } } },
    // A resource of its own whose create names a shelf in its body.
    '/reviews': { post: { operationId: 'reviewShelf', requestBody: { required: true, ...json({ type: 'object', required: ['shelfId', 'stars'], properties: { shelfId: review.properties.shelfId, stars: review.properties.stars } }) }, responses: { 201: { description: 'reviewed', ...json(review) }, 400: bad, 415: unsupported, 422: { description: 'no such shelf', ...json(error) } } } },
    '/reviews/{reviewId}': { get: { operationId: 'getReview', parameters: [id('reviewId')], responses: { 200: { description: 'the review', ...json(review) }, 400: bad, 404: notFound } } },
    '/shelves/{shelfId}/books/{bookId}': { get: { operationId: 'getBook', parameters: [id('shelfId'), id('bookId')], responses: { 200: { description: 'the book', ...json(book) }, 400: bad, 404: notFound } } },
    // Made by a PUT under the key the client chooses: no POST makes them.
    '/gadgets/{sku}': {
      parameters: [{ name: 'sku', in: 'path', required: true, schema: { type: 'string', pattern: SKU } }],
      get: { operationId: 'getGadget', responses: { 200: { description: 'the gadget', ...json(gadget) }, 400: bad, 404: notFound } },
      put: { operationId: 'putGadget', requestBody: { required: true, ...json({ type: 'object', required: ['label'], properties: { label: gadget.properties.label }, additionalProperties: false }) }, responses: { 200: { description: 'replaced', ...json(gadget) }, 201: { description: 'made', ...json(gadget) }, 400: bad, 415: unsupported } },
      delete: { operationId: 'deleteGadget', responses: { 204: { description: 'deleted' }, 400: bad, 404: notFound } }
    }
  }
}

/** One way the service breaks its word between requests; the check that must name it, and the shortest sequence that shows it. */
export const SEQUENCE_FAULTS = {
  'a created thing cannot be read': { check: 'ensure_resource_availability', steps: ['create', 'read'] },
  'a Location that names no such thing': { check: 'ensure_resource_availability', steps: ['create'] },
  'a deleted thing still read': { check: 'use_after_free', steps: ['create', 'delete', 'read'] },
  'a change answered and lost': { check: 'read_after_write', steps: ['create', 'patch', 'read'] },
  'two things given one id': { check: 'unique_keys', steps: ['create', 'create again'] },
  'a PUT answered 201 that keeps nothing': { check: 'read_after_write', steps: ['create', 'replace', 'read'] },
  'the connection cut on reading a changed thing': { check: 'not_a_server_error', steps: ['create', 'patch', 'read'] },
  'a patch that replaces the whole thing': { check: 'read_after_write', steps: ['create', 'patch', 'read'] },
  // Of one answer, seen only in a chain: its things' ids are past any the verifier sends alone.
  'a thing read back with a property its schema does not have': { check: 'response_schema_conformance', steps: ['create', 'read'] }
} as const
export type SequenceFault = keyof typeof SEQUENCE_FAULTS
/** The same of gadgets, made by a PUT. */
export const GADGET_FAULTS = {
  'a gadget put and not kept': { check: 'ensure_resource_availability', steps: ['create', 'read'] },
  'a deleted gadget still read': { check: 'use_after_free', steps: ['create', 'delete', 'read'] }
} as const
export type GadgetFault = keyof typeof GADGET_FAULTS
/** Or a fault of one request, seen only once what it names was made first. */
export type ThingsFault = SequenceFault | GadgetFault | 'a label refused on a shelf that is there' | 'a loan refused from a shelf that is there' | 'a book without its title taken'

const valid = (body: any, whole: boolean): boolean => body !== null && typeof body === 'object' && !Array.isArray(body) &&
  Object.keys(body).every((k) => k === 'name' || k === 'colour') && (whole ? typeof body.name === 'string' : Object.keys(body).length > 0) &&
  (body.name === undefined || (typeof body.name === 'string' && body.name.length >= 1 && body.name.length <= 20)) &&
  (body.colour === undefined || ['red', 'green', 'blue'].includes(body.colour))

/** The service on a free port of 127.0.0.1, closed when the test ends. */
export async function startThings (t: Test, fault?: ThingsFault): Promise<{ url: string }> {
  // By the id as the path spells it: any positive integer the document allows, however long.
  const things = new Map<string, { id: number, name: string, colour?: string }>()
  const shelves = new Map<string, { id: number, room: string, books: Map<string, { id: number, title: string }> }>()
  const reviews = new Map<string, { id: number, shelfId: number, stars: number }>()
  const gadgets = new Map<string, { sku: string, label: string }>()
  const changed = new Set<string>()
  // Ids past any the verifier sends alone, for the faults only a request naming what was made can show.
  let next = fault === 'a thing read back with a property its schema does not have' || fault === 'a book without its title taken' ? 1_000_001 : 1
  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const url = new URL(req.url!, 'http://things')
    let body: any
    if (['POST', 'PUT', 'PATCH'].includes(req.method!) && !/^application\/json\b/.test(req.headers['content-type'] ?? '')) return answer(res, 415, { message: 'send JSON' })
    if (text !== '') {
      try {
        body = JSON.parse(text)
      } catch {
        return answer(res, 400, { message: 'not JSON' })
      }
    }
    const parts = url.pathname.split('/').slice(1)
    const number = (text: string | undefined) => /^[1-9]\d*$/.test(text ?? '') ? text : undefined
    if (parts[0] === 'things') {
      if (parts.length === 1 && req.method === 'POST') {
        if (!valid(body, true)) return answer(res, 400, { message: 'a name of 1 to 20 characters, a colour of red, green or blue' })
        const made = { id: fault === 'two things given one id' ? 1 : next++, name: body.name, ...(body.colour !== undefined && { colour: body.colour }) }
        if (fault !== 'a created thing cannot be read') things.set(String(made.id), made)
        return answer(res, 201, made, { location: fault === 'a Location that names no such thing' ? `/thing/${made.id}` : `/things/${made.id}` })
      }
      const key = number(parts[1])
      if (parts.length !== 2 || key === undefined) return answer(res, 400, { message: 'an id is a positive integer' })
      const there = things.get(key)
      if (req.method === 'GET' && fault === 'the connection cut on reading a changed thing' && changed.has(key)) {
        req.socket.destroy()
        return
      }
      if (req.method === 'GET' && there !== undefined && fault === 'a thing read back with a property its schema does not have') return answer(res, 200, { ...there, shelf: 'top' })
      if (req.method === 'GET') return there === undefined ? answer(res, 404, { message: 'no such thing' }) : answer(res, 200, there)
      if (req.method === 'PATCH') {
        if (!valid(body, false)) return answer(res, 400, { message: 'name or colour' })
        if (there === undefined) return answer(res, 404, { message: 'no such thing' })
        const after = fault === 'a patch that replaces the whole thing' ? { id: there.id, name: there.name, ...body } : { ...there, ...body }
        if (fault !== 'a change answered and lost') things.set(key, after)
        changed.add(key)
        return answer(res, 200, after)
      }
      if (req.method === 'PUT') {
        if (!valid(body, true)) return answer(res, 400, { message: 'a name of 1 to 20 characters, a colour of red, green or blue' })
        const replaced = { id: Number(key), name: body.name, ...(body.colour !== undefined && { colour: body.colour }) }
        if (fault === 'a PUT answered 201 that keeps nothing') return answer(res, 201, replaced)
        things.set(key, replaced)
        return answer(res, there === undefined ? 201 : 200, replaced)
      }
      if (req.method === 'DELETE') {
        if (there === undefined) return answer(res, 404, { message: 'no such thing' })
        if (fault !== 'a deleted thing still read') things.delete(key)
        return answer(res, 204)
      }
    }
    if (parts[0] === 'reviews') {
      if (parts.length === 1 && req.method === 'POST') {
        if (!Number.isInteger(body?.shelfId) || body.shelfId < 1 || !Number.isInteger(body?.stars) || body.stars < 1 || body.stars > 5) return answer(res, 400, { message: 'a shelfId and 1 to 5 stars' })
        if (!shelves.has(String(body.shelfId))) return answer(res, 422, { message: 'no such shelf' })
        const made = { id: next++, shelfId: body.shelfId, stars: body.stars }
        reviews.set(String(made.id), made)
        return answer(res, 201, made)
      }
      const there = reviews.get(number(parts[1]) ?? '')
      if (parts.length === 2 && req.method === 'GET') return there === undefined ? answer(res, 404, { message: 'no such review' }) : answer(res, 200, there)
    }
    if (parts[0] === 'gadgets' && parts.length === 2) {
      const sku = decodeURIComponent(parts[1])
      if (!new RegExp(SKU).test(sku)) return answer(res, 400, { message: 'a sku is three capitals, a dash and three digits' })
      const there = gadgets.get(sku)
      if (req.method === 'GET') return there === undefined ? answer(res, 404, { message: 'no such gadget' }) : answer(res, 200, there)
      if (req.method === 'PUT') {
        if (typeof body?.label !== 'string' || body.label === '' || body.label.length > 20 || Object.keys(body).length !== 1) return answer(res, 400, { message: 'a label of 1 to 20 characters' })
        const made = { sku, label: body.label }
        if (fault !== 'a gadget put and not kept') gadgets.set(sku, made)
        return answer(res, there === undefined ? 201 : 200, made)
      }
      if (req.method === 'DELETE') {
        if (there === undefined) return answer(res, 404, { message: 'no such gadget' })
        if (fault !== 'a deleted gadget still read') gadgets.delete(sku)
        return answer(res, 204)
      }
    }
    if (parts[0] === 'loans' && parts.length === 1 && req.method === 'POST') {
      if (!Number.isInteger(body?.shelfId) || body.shelfId < 1 || typeof body?.reader !== 'string' || body.reader === '') return answer(res, 400, { message: 'a shelfId and a reader' })
      if (!shelves.has(String(body.shelfId)) || fault === 'a loan refused from a shelf that is there') return answer(res, 422, { message: 'no such shelf' })
      return answer(res, 201, { shelfId: body.shelfId, reader: body.reader })
    }
    if (parts[0] === 'shelves') {
      if (parts.length === 1 && req.method === 'POST') {
        if (typeof body?.room !== 'string' || body.room === '') return answer(res, 400, { message: 'a room' })
        const made = { id: next++, room: body.room, books: new Map() }
        shelves.set(String(made.id), made)
        return answer(res, 201, { id: made.id, room: made.room })
      }
      const key = number(parts[1])
      if (key === undefined) return answer(res, 400, { message: 'an id is a positive integer' })
      const there = shelves.get(key)
      if (parts.length === 2 && req.method === 'GET') return there === undefined ? answer(res, 404, { message: 'no such shelf' }) : answer(res, 200, { id: there.id, room: there.room })
      if (parts[2] === 'labels' && parts.length === 3 && req.method === 'POST') {
        if (typeof body?.text !== 'string' || body.text === '') return answer(res, 400, { message: 'a text' })
        if (there === undefined || fault === 'a label refused on a shelf that is there') return answer(res, 422, { message: 'no such shelf' })
        return answer(res, 201, { shelfId: there.id, text: body.text })
      }
      if (parts[2] === 'books') {
        if (there === undefined) return answer(res, 404, { message: 'no such shelf' })
        if (parts.length === 3 && req.method === 'POST') {
          if ((typeof body?.title !== 'string' || body.title === '') && fault !== 'a book without its title taken') return answer(res, 400, { message: 'a title' })
          const made = { id: next++, title: body.title ?? '' }
          there.books.set(String(made.id), made)
          return answer(res, 201, made)
        }
        const bookId = number(parts[3])
        if (bookId === undefined) return answer(res, 400, { message: 'an id is a positive integer' })
        const one = there.books.get(bookId)
        return one === undefined ? answer(res, 404, { message: 'no such book' }) : answer(res, 200, one)
      }
    }
    answer(res, 404, { message: 'no such path' })
  }
  return { url: await serveText(t, handle, THINGS) }
}
