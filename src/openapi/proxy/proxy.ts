import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import { PassThrough, type Duplex } from 'node:stream'
import { Pool, type Dispatcher } from 'undici'
import { carriesBody } from '../../http/message-body.ts'
import type { ErrorWriter } from '../answers/error-shapes.ts'
import type { Exchange } from './judge.ts'

// The proxy's forwarding: every request to the upstream as it came (method, path and query under
// the upstream's base, headers, body bytes, streamed as they arrive) and its answer back as it
// came (status and its reason phrase, headers, body bytes, streamed, and trailer fields), over
// kept-alive connections of undici, Node's own HTTP client (a third less CPU a request here than
// node:http's client), at its dispatch level. Only what belongs to one connection and not to the
// message (RFC 9110 §7.6.1: Connection and the headers it names, Keep-Alive, Transfer-Encoding,
// TE, Upgrade) is the proxy's own, and Host names the upstream. A copy of each body, up to
// `judgedBytes`, is kept for the judge, which is told of the exchange once both bodies have
// passed: judging never holds up the answer. An upstream that cannot be reached, or sends no
// answer within `timeoutMs`, is answered 502 or 504 in the document's error shape. An upgrade (a
// WebSocket's handshake) is sent on over a connection of its own, and where the upstream switches
// protocols (101), the two connections are joined byte for byte: what passes then is no HTTP.

const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'upgrade'])
// Of a request's, also Host (the upstream's is sent), Expect (the proxy has read on: 100-continue
// is its own) and Trailer (a request's trailer fields end at the proxy, which streams its body on).
const REQUEST_OWN: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'host', 'expect', 'trailer'])
const GATEWAY = { 502: 'Bad Gateway', 504: 'Gateway Timeout' } as const

/** A request's headers that whoever sends it again writes itself, its body's length too: the judge's injection, a curl command. */
export const SENDERS_OWN: ReadonlySet<string> = new Set([...REQUEST_OWN, 'content-length'])

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

/** Raw headers [name, value, …] less `own` (the hop-by-hop ones), and those the Connection header names. */
function endToEnd (raw: string[], own: ReadonlySet<string>): string[] {
  const named = new Set(own)
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
  // Kept-alive connections to the upstream, as many as the traffic asks for at once.
  const pool = new Pool(base.origin, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs })

  /** Why the upstream gave no answer, and the status that says so: 504 where it took too long. */
  const failureOf = (err: Error & { code?: string }): { status: 502 | 504, failure: string } => {
    const late = err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.name === 'TimeoutError'
    return late ? { status: 504, failure: `${base.origin} sent no answer within ${timeoutMs / 1000} s` } : { status: 502, failure: `${base.origin} did not answer (${err.code ?? err.message})` }
  }
  /** The proxy's own answer for an upstream that gave none, in the document's error shape. */
  const failed = (status: 502 | 504, failure: string): { type: string, text: string | Buffer } => {
    const { body, type } = errorWriter()(status, `${GATEWAY[status]}: ${failure}`)
    return { type, text: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) }
  }

  const pending = new Set<Promise<void>>()
  /** An exchange begun, kept in `pending` until `done`: once told, or its client has gone. */
  const begun = (): { told: Promise<void>, done: () => void } => {
    let done!: () => void
    const told = new Promise<void>((resolve) => { done = resolve })
    pending.add(told)
    told.then(() => pending.delete(told), () => {})
    return { told, done }
  }
  /** A request's path and query under the upstream's base path. */
  const upstreamPath = (url: string): string => `${prefix}${url.startsWith('/') ? url : `/${url}`}`
  const server = createServer(serverOptions, (req: IncomingMessage, res: ServerResponse) => {
    // The upstream's Date, if it sends one: the proxy adds nothing of its own.
    res.sendDate = false
    const method = req.method ?? 'GET'
    const url = originForm(req.url ?? '/')
    const sent = copyOf(judgedBytes)
    const answered = copyOf(judgedBytes)
    // Told once the request's body has arrived and the answer has been sent, whichever is last.
    let arrived = false
    let answer: Exchange['answer'] | undefined
    let failure: string | undefined
    const { told, done } = begun()
    let cutOff = false
    // The exchange, told once: with the body as it arrived, or without it where it was cut off.
    const tell = (answer: Exchange['answer']): void => {
      onExchange({ method, url, headers: req.headers, incoming: req, ...(cutOff ? { cutOff } : { body: sent.bytes() }), answer }, failure)
      done()
    }
    const passed = (): void => {
      if (arrived && answer !== undefined) tell(answer)
    }
    // A request cut off before its body's end: once answered, told without its body; else its
    // client is gone, and nothing is told. One whose body stops arriving once it is answered is
    // in no list of Node's that a closing connection ends: its connection's close settles it.
    const cut = (): void => {
      if (arrived || cutOff) return
      cutOff = true
      if (answer !== undefined) tell(answer)
      else done()
    }
    const socket = req.socket
    socket.once('close', cut)
    told.then(() => socket.off('close', cut), () => {})
    req.on('end', () => {
      arrived = true
      passed()
    }).on('close', cut)

    // The upstream's exchange, once undici has begun it; a client gone before its answer was
    // sent takes the upstream's request with it.
    let upstreamExchange: Dispatcher.DispatchController | undefined
    let gone = false
    res.on('close', () => {
      if (res.writableFinished) return
      gone = true
      upstreamExchange?.abort(new Error('the client went away'))
      done()
    })
    // The body as undici reads it; each chunk copied as it arrives, whoever reads it.
    req.on('data', sent.add)
    const body = carriesBody(req.headers) ? req.pipe(new PassThrough()) : null
    // undici done with the body before its end (the upstream answered without reading it all, a
    // 413, or failed): the rest is read to its end, as Node reads a body no handler read, so that
    // nothing waits on it and the judge has all the client sent.
    body?.on('close', () => {
      if (arrived) return
      req.unpipe(body)
      req.resume()
    })
    // undici's dispatch, its lowest level: the answer written as its parts arrive, with no stream
    // of undici's between (11-15% less CPU a request than its request() and a pipe, in pairs).
    pool.dispatch({ origin: base.origin, path: upstreamPath(url), method: method as Dispatcher.HttpMethod, headers: endToEnd(req.rawHeaders, REQUEST_OWN), body }, {
      onRequestStart (controller) { upstreamExchange = controller },
      onResponseStart (_controller, statusCode, headers, statusMessage) {
        // 1xx: the upstream's own; as undici's request() does, not passed on.
        if (statusCode < 200) return
        res.writeHead(statusCode, statusMessage, endToEnd(rawOf(headers), HOP_BY_HOP))
        res.on('finish', () => {
          answer = { status: statusCode, headers, body: answered.bytes() }
          passed()
        })
      },
      onResponseData (controller, chunk) {
        if (res.destroyed) return
        answered.add(chunk)
        // The client reads slower than the upstream sends: the upstream waits for it.
        if (!res.write(chunk)) {
          controller.pause()
          res.once('drain', () => controller.resume())
        }
      },
      onResponseEnd (_controller, trailers) {
        // Sent where the answer is chunked, as the upstream's was: a client over HTTP/1.0 gets none (nor from Node's own server).
        res.addTrailers(Object.entries(trailers).flatMap(([name, value]) => [value ?? []].flat().map((one): [string, string] => [name, one])))
        res.end()
      },
      onResponseError (_controller, err: Error & { code?: string }) {
        if (gone) return
        // Cut off within its body: the client's answer is cut off too.
        if (res.headersSent) {
          res.destroy()
          return
        }
        const why = failureOf(err)
        failure = why.failure
        const { type, text } = failed(why.status, failure)
        res.writeHead(why.status, { 'content-type': type }).end(text)
        answer = { status: why.status, headers: {} }
        passed()
      }
    })
  })

  // Connections joined after an upgrade, the client's side of each.
  const tunnels = new Set<Duplex>()
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, early: Buffer) => {
    const method = req.method ?? 'GET'
    const url = originForm(req.url ?? '/')
    const { done } = begun()
    const tell = (answer: Exchange['answer'], failure?: string): void => {
      onExchange({ method, url, headers: req.headers, incoming: req, body: Buffer.alloc(0), answer }, failure)
      done()
    }
    // Its own connection (no pool's: it leaves HTTP), with the switch it asks for, and no answer past timeoutMs.
    const headers = [...endToEnd(req.rawHeaders, REQUEST_OWN), 'connection', 'upgrade', 'upgrade', String(req.headers.upgrade)]
    const outgoing = (base.protocol === 'https:' ? httpsRequest : httpRequest)(`${base.origin}${upstreamPath(url)}`, { method, headers, agent: false, signal: AbortSignal.timeout(timeoutMs) })
    // A client gone before the answer takes the upstream's request with it.
    const gone = (): void => { outgoing.destroy(); done() }
    socket.once('close', gone).on('error', () => {})
    outgoing.on('upgrade', (res: IncomingMessage, upstream: Socket, upstreamHead: Buffer) => {
      socket.off('close', gone)
      // Every header of the switch, its Connection and Upgrade too: they are what the client awaits.
      socket.write(answerHead(res.statusCode ?? 101, res.statusMessage ?? '', res.rawHeaders))
      socket.write(upstreamHead)
      upstream.write(early)
      upstream.pipe(socket).pipe(upstream)
      tunnels.add(socket)
      const close = (): void => { tunnels.delete(socket); socket.destroy(); upstream.destroy() }
      socket.on('close', close)
      upstream.on('close', close).on('error', () => {})
      tell({ status: res.statusCode ?? 101, headers: res.headers })
    })
    // Any other answer: as it came, the end of the connection its body's, as the client asked to leave HTTP on it.
    outgoing.on('response', (res) => {
      socket.off('close', gone)
      const answered = copyOf(judgedBytes)
      socket.write(answerHead(res.statusCode ?? 502, res.statusMessage ?? '', [...endToEnd(res.rawHeaders, HOP_BY_HOP), 'connection', 'close']))
      res.on('data', answered.add).on('end', () => tell({ status: res.statusCode ?? 502, headers: res.headers, body: answered.bytes() })).on('error', () => socket.destroy())
      res.pipe(socket)
    })
    outgoing.on('error', (err: Error & { code?: string }) => {
      if (socket.destroyed) return
      const { status, failure } = failureOf(err)
      const { type, text } = failed(status, failure)
      socket.end(Buffer.concat([answerHead(status, GATEWAY[status], ['content-type', type, 'content-length', String(Buffer.byteLength(text)), 'connection', 'close']), Buffer.from(text)]))
      tell({ status, headers: {} }, failure)
    })
    outgoing.end()
  })
  server.on('close', () => { pool.close().catch(() => {}) })
  // Node's list of a server's connections leaves out those it handed over in an upgrade: cutting
  // them all (a shutdown past its drain) cuts the joined ones too.
  const closeAll = server.closeAllConnections.bind(server)
  server.closeAllConnections = () => {
    closeAll()
    for (const tunnel of tunnels) tunnel.destroy()
  }
  return { server, settled: async () => { await Promise.all(pending) } }
}

/** An answer's status line and header section, as HTTP/1.1 writes them; its values as Node's parser took them, so no line break within. */
function answerHead (status: number, reason: string, raw: string[]): Buffer {
  let text = `HTTP/1.1 ${status} ${reason}\r\n`
  for (let i = 0; i < raw.length; i += 2) text += `${raw[i]}: ${raw[i + 1]}\r\n`
  return Buffer.from(`${text}\r\n`, 'latin1')
}

/**
 * A request target as a path and query: one in absolute form (`http://host/path`, from a client
 * that uses the proxy as its HTTP proxy, which a server must accept: RFC 9112 §3.2.2) is sent on
 * and judged as its path and query, as written.
 */
function originForm (target: string): string {
  const authority = /^https?:\/\/[^/?#]*/i.exec(target)
  if (authority === null) return target
  const rest = target.slice(authority[0].length)
  return rest.startsWith('/') ? rest : `/${rest}`
}

/** Headers as undici gives them, as raw [name, value, …]: a header it received twice, twice. */
function rawOf (headers: IncomingHttpHeaders): string[] {
  const raw: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const one of value) raw.push(name, one)
    else if (value !== undefined) raw.push(name, value)
  }
  return raw
}
