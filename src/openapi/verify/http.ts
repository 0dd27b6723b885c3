import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Answer } from './checks.ts'
import type { Transport } from './verifier.ts'

// The verifier's requests over the network, to one base URL and nowhere else: each request's
// path is the document's, under the base's; a URL that would leave it (a path parameter that
// reads as "..") is not sent, and a redirect is an answer, never followed. Node's own client,
// which sends a body with any method (a document may give a GET one), each request bounded in
// time and its answer in size.

const MAX_ANSWER_BYTES = 16 * 1024 * 1024

/** Requests to `baseUrl` over kept-alive connections, as many at once as `connections`; `close` ends them. */
export function httpTransport (baseUrl: string, { timeoutMs, connections }: { timeoutMs: number, connections: number }): { send: Transport, close: () => void } {
  const base = new URL(baseUrl)
  const prefix = base.pathname.replace(/\/$/, '')
  const agent = new (base.protocol === 'https:' ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: connections })
  const send: Transport = async ({ method, path, headers, body }) => {
    const url = new URL(`${base.origin}${prefix}${path}`)
    if (url.origin !== base.origin || !`${url.pathname}/`.startsWith(`${prefix}/`)) throw new Error(`not sent: ${url.href} is outside ${baseUrl}`)
    return await new Promise<Answer>((resolve, reject) => {
      const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { agent, method, headers: { ...headers, ...(body !== undefined && { 'content-length': Buffer.byteLength(body) }) }, signal: AbortSignal.timeout(timeoutMs) }, (incoming) => {
        const chunks: Buffer[] = []
        let size = 0
        incoming.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_ANSWER_BYTES) incoming.destroy(new Error(`an answer of over ${MAX_ANSWER_BYTES} bytes`))
          else chunks.push(chunk)
        })
        incoming.on('end', () => {
          const answered: Record<string, string | undefined> = {}
          for (const [name, value] of Object.entries(incoming.headers)) answered[name] = Array.isArray(value) ? value.join(', ') : value
          resolve({ status: incoming.statusCode ?? 0, headers: answered, body: Buffer.concat(chunks) })
        })
        incoming.on('error', reject)
      })
      outgoing.on('error', reject)
      outgoing.end(body)
    })
  }
  return { send, close: () => agent.destroy() }
}
