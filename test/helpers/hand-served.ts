import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Test } from 'tap'

// What the hand-written services of the verifier's tests share (pets-service.ts, things-service.ts):
// a node:http server on a free port of 127.0.0.1 that reads each request's body as text before
// handling it, closed when the test ends; and an answer in JSON (none, for a 204).

/** Serves `handle` until the test ends; its base URL. */
export async function serveText (t: Test, handle: (req: IncomingMessage, res: ServerResponse, text: string) => void): Promise<string> {
  const server = createServer((req, res) => {
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
