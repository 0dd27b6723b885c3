import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Test } from 'tap'
import { answer, methodAnswer, serveText } from './hand-served.ts'

// A small service written by hand on node:http, with nothing of the engine in it, that keeps the
// word of its document (PETS) unless it is told to break it in one way (a Fault): the verifier's
// tests run it, once as it should be and once for each fault, and see the right check name it.

export const TOKEN = 'pets-token-0123456789'

const pet = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', minimum: 1 }, name: { type: 'string', minLength: 1 }, tag: { type: 'string' }, secret: { type: 'string', writeOnly: true } } }
const error = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } }
const errors = {
  400: { description: 'bad request', content: { 'application/json': { schema: error } } },
  401: { description: 'no credentials', content: { 'application/json': { schema: error } } },
  404: { description: 'no such pet', content: { 'application/json': { schema: error } } },
  415: { description: 'not JSON', content: { 'application/json': { schema: error } } }
}

export const PETS = {
  openapi: '3.1.0',
  info: { title: 'Pets', version: '1.0.0' },
  components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  security: [{ bearer: [] }],
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        parameters: [{ name: 'limit', in: 'query', required: true, schema: { type: 'integer', minimum: 1, maximum: 100 } }],
        responses: { 200: { description: 'pets', content: { 'application/json': { schema: { type: 'array', items: pet } } } }, 400: errors[400], 401: errors[401] }
      },
      post: {
        operationId: 'addPet',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 40 }, tag: { type: 'string' }, secret: { type: 'string', writeOnly: true } } } } } },
        responses: {
          201: { description: 'added', content: { 'application/json': { schema: pet } }, links: { GetAddedPet: { operationId: 'getPet', parameters: { 'path.id': '$response.body#/id' } } } },
          400: errors[400],
          401: errors[401],
          415: errors[415]
        }
      }
    },
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
        responses: {
          200: { description: 'a pet', headers: { 'X-Rate-Limit': { required: true, schema: { type: 'integer' } } }, content: { 'application/json': { schema: pet } } },
          400: errors[400],
          401: errors[401],
          404: errors[404]
        }
      }
    }
  }
}

/** One way the service breaks its document; the check that must name it. */
export const FAULTS = {
  'an answer of the wrong type': 'response_schema_conformance',
  'a required property missing': 'response_schema_conformance',
  'a writeOnly property sent': 'response_schema_conformance',
  'an undeclared status': 'status_code_conformance',
  'an undeclared Content-Type': 'content_type_conformance',
  'a 5xx': 'not_a_server_error',
  'a pet without its optional tag answered 500': 'not_a_server_error',
  'the connection cut on a name not in ASCII': 'not_a_server_error',
  'a required header missing': 'response_headers_conformance',
  'an invalid body accepted with 2xx': 'negative_data_rejection',
  'a name past its maxLength accepted': 'negative_data_rejection',
  'a limit past its maximum accepted': 'negative_data_rejection',
  'auth ignored': 'ignored_auth',
  'any bearer token taken': 'ignored_auth',
  'a valid name refused past three characters': 'positive_data_acceptance',
  'a name at its maxLength refused': 'positive_data_acceptance',
  'a name counted in bytes': 'positive_data_acceptance',
  'a limit at its maximum refused': 'positive_data_acceptance',
  'an added pet not kept': 'ensure_resource_availability',
  'an undeclared method answered 404': 'unsupported_method',
  'a 405 without Allow': 'unsupported_method'
} as const
export type Fault = keyof typeof FAULTS

/** The service on a free port of 127.0.0.1, closed when the test ends; every request it took, in `requests`. */
export async function startPets (t: Test, fault?: Fault, { tooMany = 0 } = {}): Promise<{ url: string, requests: Array<{ method: string, url: string }> }> {
  const stored = new Map<number, Record<string, unknown>>([[1, { id: 1, name: 'Rex', tag: 'dog' }]])
  const requests: Array<{ method: string, url: string }> = []
  let refusedForRate = 0
  const notAllowed = methodAnswer(PETS)
  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    requests.push({ method: req.method!, url: req.url! })
    // Too many requests, the first `tooMany` times: a 429 to be waited out, which no operation declares.
    if (refusedForRate < tooMany) {
      refusedForRate++
      return answer(res, 429, { message: 'slow down' }, { 'retry-after': '1' })
    }
    // A method the path does not declare, as a router answers it, before any credentials are asked for.
    const allow = notAllowed(req.method!, req.url!.split('?')[0])
    if (allow !== undefined && fault !== 'an undeclared method answered 404') return answer(res, 405, { message: `${req.method!} is not one of ${allow}` }, fault === 'a 405 without Allow' ? {} : { allow })
    const authorized = fault === 'any bearer token taken' ? /^Bearer \S+$/.test(req.headers.authorization ?? '') : req.headers.authorization === `Bearer ${TOKEN}`
    if (fault !== 'auth ignored' && !authorized) return answer(res, 401, { message: 'no credentials' }, { 'www-authenticate': 'Bearer' })
    const url = new URL(req.url!, 'http://pets')
    if (url.pathname === '/pets' && req.method === 'GET') {
      const limit = url.searchParams.get('limit')
      if (limit === null || !/^\d+$/.test(limit) || Number(limit) < 1 || (Number(limit) > 100 && fault !== 'a limit past its maximum accepted')) return answer(res, 400, { message: 'limit must be 1 to 100' })
      if (fault === 'a limit at its maximum refused' && Number(limit) >= 100) return answer(res, 400, { message: 'limit must be 1 to 99' })
      if (fault === 'a 5xx') return answer(res, 500, { message: 'oops' })
      return answer(res, 200, [...stored.values()].slice(0, Number(limit)))
    }
    if (url.pathname === '/pets' && req.method === 'POST') {
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return answer(res, 415, { message: 'send JSON' })
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        return answer(res, 400, { message: 'not JSON' })
      }
      const valid = body !== null && typeof body === 'object' && typeof body.name === 'string' && body.name.length >= 1 && (body.name.length <= 40 || fault === 'a name past its maxLength accepted') && (body.tag === undefined || typeof body.tag === 'string')
      if (!valid && fault !== 'an invalid body accepted with 2xx') return answer(res, 400, { message: 'name is required, tag is text' })
      if (fault === 'the connection cut on a name not in ASCII' && /[^\x20-\x7e]/.test(body.name)) {
        req.socket.destroy()
        return
      }
      if (fault === 'a pet without its optional tag answered 500' && body.tag === undefined && body.secret === undefined) return answer(res, 500, { message: 'tag.trim is not a function' })
      if (fault === 'a valid name refused past three characters' && body.name.length > 3) return answer(res, 400, { message: 'names are short here' })
      if (fault === 'a name at its maxLength refused' && body.name.length >= 40) return answer(res, 400, { message: 'names are under 40 characters' })
      if (fault === 'a name counted in bytes' && Buffer.byteLength(body.name) > 40) return answer(res, 400, { message: 'names are under 40 bytes' })
      const id = stored.size + 1
      const added = { id, name: body.name, ...(typeof body.tag === 'string' && { tag: body.tag }) }
      if (fault === 'an added pet not kept') return answer(res, 201, { ...added, id: id + 1000 })
      stored.set(id, added)
      if (fault === 'a required property missing') return answer(res, 201, { id })
      if (fault === 'a writeOnly property sent') return answer(res, 201, { ...added, secret: 'kept' })
      return answer(res, 201, added)
    }
    const found = /^\/pets\/([^/]+)$/.exec(url.pathname)
    // HEAD as GET: Node's server sends its headers and no body.
    if (found !== null && (req.method === 'GET' || req.method === 'HEAD')) {
      if (!/^\d+$/.test(found[1]) || Number(found[1]) < 1) return answer(res, 400, { message: 'id is a positive integer' })
      const one = stored.get(Number(found[1]))
      if (one === undefined) return answer(res, fault === 'an undeclared status' ? 418 : 404, { message: 'no such pet' })
      if (fault === 'an undeclared Content-Type') {
        res.writeHead(200, { 'content-type': 'text/html', 'x-rate-limit': '100' })
        res.end(`<p>${String(one.name)}</p>`)
        return
      }
      return answer(res, 200, fault === 'an answer of the wrong type' ? { ...one, id: String(one.id) } : one, fault === 'a required header missing' ? {} : { 'x-rate-limit': '100' })
    }
    answer(res, 404, { message: 'no such path' })
  }
  return { url: await serveText(t, handle), requests }
}
