import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Test } from 'tap'

// What the hand-written services of the verifier's tests share (pets-service.ts, things-service.ts):
// a node:http server on a free port of 127.0.0.1 that reads each request's body as text before
// handling it, closed when the test ends, its document's paths routed as a router routes them;
// and an answer in JSON (none, for a 204).

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/**
 * What a router answers for `document`'s paths: for a request whose path one of them takes
 * (`{id}` any segment) but whose method none of them declares, 405 with the methods they take in
 * Allow (RFC 9110 §15.5.6); undefined for any other request, which the service handles itself.
 */
export function methodAnswer (document: { paths?: Record<string, object> }): (method: string, path: string) => string | undefined {
  const templates = Object.entries(document.paths ?? {}).map(([template, item]) => ({
    takes: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    methods: METHODS.filter((method) => method in item).map((method) => method.toUpperCase())
  }))
  return (method, path) => {
    const matching = templates.filter(({ takes }) => takes.test(path))
    if (matching.length === 0) return undefined
    const allowed = new Set(matching.flatMap(({ methods }) => methods))
    if (allowed.has('GET')) allowed.add('HEAD')
    allowed.add('OPTIONS')
    return allowed.has(method) ? undefined : [...allowed].sort().join(', ')
  }
}

/** Serves `handle` until the test ends; its base URL. With a `document`, its paths are routed as a framework's router routes them: a method none declares is answered 405. */
export async function serveText (t: Test, handle: (req: IncomingMessage, res: ServerResponse, text: string) => void, document?: { paths?: Record<string, object> }): Promise<string> {
  const notAllowed = document === undefined ? () => undefined : methodAnswer(document)
  const server = createServer((req, res) => {
    const allow = notAllowed(req.method!, req.url!.split('?')[0])
    if (allow !== undefined) return answer(res, 405, { message: `${req.method!} is not one of ${allow}` }, { allow })
    let text = ''
    req.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => handle(req, res, text))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

/** An answer with `body` as JSON; with no body, none. */
export function answer (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, body === undefined ? headers : { 'content-type': 'application/json', ...headers })
  res.end(body === undefined ? undefined : JSON.stringify(body))
}
