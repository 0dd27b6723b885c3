import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { VerifierLimit, type Answer } from './checks.ts'
import type { Transport } from './verifier.ts'

// The verifier's requests over the network, to one base URL and nowhere else: each request's
// path is the document's, under the base's; a URL that would leave it (a path parameter that
// reads as "..") is not sent, and a redirect is an answer, never followed. Node's own client,
// which sends a body with any method (a document may give a GET one), each request bounded in
// time and its answer in size. What the service does not answer (a connection refused or cut, no
// answer in time) is an error the verifier reports; what its own bounds stop, a VerifierLimit.

const MAX_ANSWER_BYTES = 16 * 1024 * 1024
// Node's refusals of a request it will not write: a header's name that is no token, a value with
// a character no header can hold.
const UNSENDABLE = new Set(['ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_CHAR'])

/** Requests to `baseUrl` over kept-alive connections, as many at once as `connections`; `close` ends them. */
export function httpTransport (baseUrl: string, { timeoutMs, connections }: { timeoutMs: number, connections: number }): { send: Transport, close: () => void } {
  const base = new URL(baseUrl)
  const prefix = base.pathname.replace(/\/$/, '')
  const agent = new (base.protocol === 'https:' ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: connections })
  const once = async (url: URL, { method, headers, body }: Parameters<Transport>[0]): Promise<Answer> => await new Promise<Answer>((resolve, reject) => {
    const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { agent, method, headers: { ...headers, ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }) }, signal: AbortSignal.timeout(timeoutMs) }, (incoming) => {
      const chunks: Buffer[] = []
      let size = 0
      incoming.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_ANSWER_BYTES) incoming.destroy(new VerifierLimit(`an answer of over ${MAX_ANSWER_BYTES} bytes`))
        else chunks.push(chunk)
      })
      incoming.on('end', () => {
        const answered: Record<string, string | undefined> = {}
        for (const [name, value] of Object.entries(incoming.headers)) answered[name] = Array.isArray(value) ? value.join(', ') : value
        resolve({ status: incoming.statusCode ?? 0, headers: answered, body: Buffer.concat(chunks) })
      })
      incoming.on('error', (err) => { reject(failure(err)) })
    })
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed as this request went out: sent again, once, on a
      // new one (Node's own advice for reusedSocket), not reported as the service's failure.
      reject(outgoing.reusedSocket && err.code === 'ECONNRESET' ? new Reused(err.message) : failure(err))
    })
    outgoing.end(body)
  })
  const failure = (err: Error): Error => err instanceof VerifierLimit ? err : err.name === 'TimeoutError' || err.name === 'AbortError' ? new Error(`no answer within ${timeoutMs} ms`) : err
  const send: Transport = async (request) => {
    const url = new URL(`${base.origin}${prefix}${request.path}`)
    if (url.origin !== base.origin || !`${url.pathname}/`.startsWith(`${prefix}/`)) throw new VerifierLimit(`not sent: ${url.href} is outside ${baseUrl}`)
    try {
      return await once(url, request)
    } catch (err) {
      if (err instanceof Reused) return await once(url, request)
      // What no HTTP request can carry (RapidAPI's "ADVICEment API Key" header, its name no token)
      // is never sent: the verifier's limit, not the service's failure.
      if (UNSENDABLE.has((err as NodeJS.ErrnoException).code ?? '')) throw new VerifierLimit(`not sent: ${(err as Error).message}`)
      throw err
    }
  }
  return { send, close: () => agent.destroy() }
}

class Reused extends Error {}
