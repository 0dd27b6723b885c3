import underPressure from '@fastify/under-pressure'
import type { FastifyHttpOptions, FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import type { HttpConfig } from './config.ts'
import { OverloadedError, ShuttingDownError } from '../errors.ts'
import type { ErrorWriter } from '../openapi/answers/error-shapes.ts'
import { plainError } from './error-handler.ts'
import { API_HEADERS } from '../security/headers.ts'

// What a public API owes its users: bounded requests, bounded connections, and load shed with
// a 503 in the contract's Error shape instead of falling over. Each bound is a config knob.

// How often the event-loop delay is sampled: under-pressure's default, 1 s. A shorter interval
// reacts sooner but misreads one long synchronous step (a sample window with no tick in it
// counts as infinite delay) as overload.
const SAMPLE_INTERVAL = 1000

/** Errors Node's HTTP parser raises before Fastify sees a request, answered in the Error shape. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request line and headers are too large'],
  HPE_URI_TOO_LONG: [431, 'Request Header Fields Too Large', 'The request line and headers are too large']
}
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'Malformed HTTP request']
// The reason phrases are spelled here, not read from node:http's STATUS_CODES: importing node:http
// from an ES module evaluates all its exports, and so loads Node's fetch (undici), about 5% of a
// start, which the service never uses.

// These answers bypass Fastify's hooks: they carry the API's security headers, and an id, here.
const SECURITY_HEADER_LINES = Object.entries(API_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('')

/** Answers what the parser refused in the shape `writer` gives: the document's errors' (no operation is known yet). */
const clientErrorHandler = (writer: () => ErrorWriter) => (err: NodeJS.ErrnoException, socket: Socket): void => {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, message] = CLIENT_ERRORS[err.code ?? ''] ?? MALFORMED
  // Here no error may escape: it would end the process.
  let answer: ReturnType<ErrorWriter>
  try {
    answer = writer()(status, message)
  } catch {
    answer = plainError(status, message)
  }
  const { body, type } = answer
  const bytes = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body)
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(bytes)}\r\nX-Request-Id: ${randomUUID()}\r\n${SECURITY_HEADER_LINES}Connection: close\r\n\r\n`)
    socket.write(bytes)
  }
  socket.destroy()
}

/** Fastify's options for these bounds; what the parser refuses is answered in the shape `writer` gives. */
export function limitOptions (config: HttpConfig, writer: () => ErrorWriter = () => plainError): FastifyHttpOptions<Server> {
  return {
    bodyLimit: config.bodyLimit,
    requestTimeout: config.requestTimeout,
    keepAliveTimeout: config.keepAliveTimeout,
    // Our own 503 (below) answers requests that arrive while closing, in the Error shape.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(writer),
    // A path value is as long as the document allows (an ARN, a URL), its request line bounded by
    // the header size; Fastify's 100 characters would answer 414 to what the document accepts.
    routerOptions: { maxParamLength: config.maxHeaderBytes },
    http: {
      maxHeaderSize: config.maxHeaderBytes,
      headersTimeout: config.requestTimeout,
      // How often Node looks for requests past their timeout (its default is 30 s).
      connectionsCheckingInterval: Math.min(1000, config.requestTimeout)
    }
  }
}

/** Caps connections and refuses new requests once closing. Called on the root instance, not registered, so its hook covers every route. */
export async function connectionLimits (app: FastifyInstance, { config }: { config: HttpConfig }): Promise<void> {
  app.server.maxConnections = config.maxConnections
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  // Callback hooks, not async ones: these run on every request, and a promise each costs.
  app.addHook('onRequest', (_request, _reply, done) => done(closing ? new ShuttingDownError() : undefined))
  // Every answer sent while closing ends its connection, so no keep-alive connection turns
  // idle after the close began and holds the drain open until its keep-alive timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}

/** Sheds API load with 503 while the event loop lags. Called on the API scope: the probes stay answerable. */
export async function overloadProtection (app: FastifyInstance, { config }: { config: HttpConfig }): Promise<void> {
  if (config.maxEventLoopDelay === 0) return
  // Start-up itself blocks the event loop; a sample taken then would shed the first requests.
  // So shedding is armed only once two samples have been taken after the app is ready.
  let armed = false
  app.addHook('onReady', async () => { setTimeout(() => { armed = true }, 2 * SAMPLE_INTERVAL).unref() })
  await app.register(underPressure, {
    maxEventLoopDelay: config.maxEventLoopDelay,
    sampleInterval: SAMPLE_INTERVAL,
    pressureHandler: async () => {
      if (!armed) return
      throw new OverloadedError()
    }
  })
}
