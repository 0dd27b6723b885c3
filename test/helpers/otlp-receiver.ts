import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Owner } from './identity-provider.ts'
import { waitUntil } from './proc.ts'

// An OTLP/HTTP trace receiver of the test's own, standing in for an OpenTelemetry Collector on
// 127.0.0.1: it keeps what services export to /v1/traces (OTLP/JSON decoded into spans; protobuf
// kept as bytes), and can answer normally or hang.

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  links: Array<{ traceId: string, spanId: string }>
  /** Its events, in order, each with its time (ns since the epoch) and attributes. */
  events: Array<{ name: string, timeUnixNano: bigint, attributes: Record<string, unknown> }>
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  /** 0 unset, 1 ok, 2 error. */
  status: number
  resource: Record<string, unknown>
  /** Its instrumentation scope's name. */
  scope: string
  /** Its W3C trace state, '' if none. */
  traceState: string
  droppedAttributesCount: number
  droppedLinksCount: number
}

export interface Receiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  spans: ReceivedSpan[]
  /** Each protobuf export's body, and its content type. */
  protobuf: Buffer[]
  requests: number
  mode: 'up' | 'hang'
  /** Resolves once `done()` holds, or rejects after `ms`, naming what was awaited. */
  waitFor: (done: () => boolean, what: string, ms?: number) => Promise<void>
}

/** An OTLP/JSON AnyValue as a plain value. */
function plain (value: Record<string, any>): unknown {
  if ('stringValue' in value) return value.stringValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return value.doubleValue
  if ('boolValue' in value) return value.boolValue
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(plain)
  return undefined
}

const attributesOf = (list: Array<{ key: string, value: Record<string, any> }> = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]))

async function body (request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export async function startReceiver (t: Owner): Promise<Receiver> {
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    receiver.requests++
    if (receiver.mode === 'hang') return // never answers; the connection closes when the test ends
    body(request).then((bytes) => {
      if (request.headers['content-type']?.includes('json') === true) {
        for (const resourceSpans of JSON.parse(bytes.toString()).resourceSpans ?? []) {
          const resource = attributesOf(resourceSpans.resource?.attributes)
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              receiver.spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map(({ traceId, spanId }: { traceId: string, spanId: string }) => ({ traceId, spanId })),
                events: (span.events ?? []).map((event: { name: string, timeUnixNano: string, attributes?: [] }) => ({ name: event.name, timeUnixNano: BigInt(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
                startTimeUnixNano: BigInt(span.startTimeUnixNano),
                endTimeUnixNano: BigInt(span.endTimeUnixNano),
                status: span.status?.code ?? 0,
                resource,
                scope: scope.scope?.name ?? '',
                traceState: span.traceState ?? '',
                droppedAttributesCount: span.droppedAttributesCount ?? 0,
                droppedLinksCount: span.droppedLinksCount ?? 0
              })
            }
          }
        }
      } else {
        receiver.protobuf.push(bytes)
      }
      response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/json' }).end(request.headers['content-type']?.includes('json') === true ? '{}' : '')
    }, () => response.destroy())
  })
  server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: [],
    protobuf: [],
    requests: 0,
    mode: 'up',
    async waitFor (done, what, ms = 15_000) {
      await waitUntil(done, ms, () => `the receiver never saw ${what} in ${ms} ms; it holds ${receiver.spans.length} spans: ${receiver.spans.map((s) => s.name).join(', ')}`)
    }
  }
  return receiver
}
