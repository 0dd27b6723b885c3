import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import type { Exchange } from './judge.ts'

// The proxy's forwarding: every request to the upstream as it came (method, path and query under
// the upstream's base, headers, body bytes, streamed as they arrive) and its answer back as it
// came (status, headers, body bytes, streamed), over kept-alive connections. Only what belongs to
// one connection and not to the message (RFC 9110 §7.6.1: Connection and the headers it names,
// Keep-Alive, Transfer-Encoding, TE, Trailer, Upgrade) is the proxy's own, and Host names the
// upstream. A copy of each body, up to `judgedBytes`, is kept for the judge, which is told of
// the exchange once both bodies have passed: judging never holds up the answer. An upstream that
// cannot be reached, or sends no answer within `timeoutMs`, is answered 502 or 504 in the
// document's error shape.

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'])

export interface ProxyOptions {
  upstream: string
  /** Bytes of a body kept for the judge; a longer body passes on unjudged. */
  judgedBytes: number
  /** How long the upstream may take to begin its answer. */
  timeoutMs: number
  errorWriter: () => ErrorWriter
  /** Each exchange, once both bodies have passed; `failure` where the proxy answered for the upstream. */
  onExchange: (exchange: Exchange, failure?: string) => void
}

/** Raw headers [name, value, …] less the hop-by-hop ones, and those the Connection header names. */
function endToEnd (raw: string[]): string[] {
  const named = new Set(HOP_BY_HOP)
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'connection') for (const token of raw[i + 1].split(',')) named.add(token.trim().toLowerCase())
  }
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) if (!named.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1])
  return out
}

/** Keeps the chunks of a stream up to `limit` bytes: `bytes()` is undefined once past it. */
function copyOf (limit: number): { add: (chunk: Buffer) => void, bytes: () => Buffer | undefined } {
  const chunks: Buffer[] = []
  let size = 0
  return {
    add (chunk) {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
    },
    bytes: () => size > limit ? undefined : Buffer.concat(chunks, size)
  }
}

export interface Proxy {
  server: Server
  /** Once every exchange begun has been told, or its client has gone. */
  settled: () => Promise<void>
}

export function proxyServer ({ upstream, judgedBytes, timeoutMs, errorWriter, onExchange }: ProxyOptions, serverOptions: ServerOptions = {}): Proxy {
  const base = new URL(upstream)
  const prefix = base.pathname.replace(/\/$/, '')
  const secure = base.protocol === 'https:'
  const agent = new (secure ? HttpsAgent : HttpAgent)({ keepAlive: true })
  const send = secure ? httpsRequest : httpRequest

  const failed = (res: ServerResponse, status: 502 | 504, message: string): void => {
    const { body, type } = errorWriter()(status, message)
    res.writeHead(status, { 'content-type': type }).end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body))
  }

  const pending = new Set<Promise<void>>()
  const server = createServer(serverOptions, (req: IncomingMessage, res: ServerResponse) => {
    // The upstream's Date, if it sends one: the proxy adds nothing of its own.
    res.sendDate = false
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    const sent = copyOf(judgedBytes)
    const answered = copyOf(judgedBytes)
    const headers = endToEnd(req.rawHeaders).filter((_, i, all) => i % 2 === 0 ? all[i].toLowerCase() !== 'host' : all[i - 1].toLowerCase() !== 'host')
    // Told once the request's body has arrived and the answer has been sent, whichever is last.
    let arrived = false
    let answer: Exchange['answer'] | undefined
    let failure: string | undefined
    let done!: () => void
    const told = new Promise<void>((resolve) => { done = resolve })
    pending.add(told)
    told.then(() => pending.delete(told), () => {})
    const passed = (): void => {
      if (!arrived || answer === undefined) return
      onExchange({ method, url, headers: req.headers, body: sent.bytes(), answer }, failure)
      done()
    }
    req.on('data', sent.add).on('end', () => {
      arrived = true
      passed()
    }).on('close', () => { if (!arrived) done() })

    const outgoing = send(new URL(`${prefix}${url.startsWith('/') ? url : `/${url}`}`, base.origin), { agent, method, headers: [...headers, 'Host', base.host] as unknown as Record<string, string>, setHost: false })
    const timer = setTimeout(() => outgoing.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), timeoutMs)
    outgoing.on('response', (incoming) => {
      clearTimeout(timer)
      res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEnd(incoming.rawHeaders))
      incoming.on('data', answered.add)
      incoming.on('error', () => res.destroy())
      incoming.pipe(res)
      res.on('finish', () => {
        answer = { status: incoming.statusCode ?? 502, headers: incoming.headers, body: answered.bytes() }
        passed()
      })
    })
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (res.headersSent) {
        res.destroy()
        return
      }
      const late = err.code === 'ETIMEDOUT'
      failure = late ? `${base.origin} sent no answer within ${timeoutMs / 1000} s` : `${base.origin} did not answer (${err.code ?? err.message})`
      failed(res, late ? 504 : 502, late ? `Gateway Timeout: ${failure}` : `Bad Gateway: ${failure}`)
      answer = { status: late ? 504 : 502, headers: {} }
      // The rest of the request's body, which the upstream will not read, is read to its end.
      req.resume()
      passed()
    })
    // A client gone before its answer was sent: the upstream's request goes with it.
    res.on('close', () => {
      clearTimeout(timer)
      if (res.writableFinished) return
      outgoing.destroy()
      done()
    })
    req.pipe(outgoing)
  })
  server.on('close', () => agent.destroy())
  return { server, settled: async () => { await Promise.all(pending) } }
}
