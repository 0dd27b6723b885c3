import { isIP } from 'node:net'
import { integer, oneOf, optional, section, string, text } from '../config/section.ts'
import { HOST_NAME } from './host.ts'

// The HTTP layer's configuration: where it listens, and the bounds on every request and connection.

export const httpConfig = section({
  title: 'HTTP: listening, limits and proxies',
  variables: {
    PORT: integer(0, 65535, { default: 3000, description: 'Port to listen on (`0` picks a free one).' }),
    HOST: text({ default: '127.0.0.1', description: 'Address to listen on; `0.0.0.0` for every interface.' }),
    BODY_LIMIT_BYTES: integer(1024, 64 * 1024 * 1024, { default: 1024 * 1024, description: 'Largest request body; larger answers 413. A multipart body\'s parts together, too.' }),
    PART_LIMIT_BYTES: integer(1024, 64 * 1024 * 1024, { default: 1024 * 1024, description: 'Largest part (a file or a field) of a multipart body; larger answers 413.' }),
    MAX_PARTS: integer(1, 1_000_000, { default: 1000, description: 'Most parts (files and fields) of a multipart body, and most fields of a form (`application/x-www-form-urlencoded`); more answers 413, before the rest is parsed (@fastify/multipart\'s bound).' }),
    MAX_HEADER_BYTES: integer(1024, 1024 * 1024, { default: 16 * 1024, description: 'Largest request line plus headers; larger answers 431.' }),
    REQUEST_TIMEOUT_MS: integer(100, 3_600_000, { default: 30_000, description: 'Longest a request may take to arrive, headers and body; slower answers 408 and the connection is closed (no slowloris).' }),
    KEEP_ALIVE_TIMEOUT_MS: integer(100, 3_600_000, { default: 72_000, description: 'How long an idle keep-alive connection stays open (longer than the usual 60 s load-balancer idle timeout).' }),
    MAX_CONNECTIONS: integer(1, 1_000_000, { default: 1024, description: 'Most open connections; further ones are closed at once.' }),
    MAX_EVENT_LOOP_DELAY_MS: integer(0, 60_000, { default: 1000, description: 'Event-loop lag past which API requests are shed with 503 and `Retry-After` (@fastify/under-pressure); `0` turns it off. The probes are never shed.' }),
    SHUTDOWN_TIMEOUT_MS: integer(100, 600_000, { default: 10_000, description: 'How long in-flight requests may drain after `SIGTERM` before the process exits anyway (code 1).' }),
    CORS_ORIGINS: optional(string({ description: 'Unset: none. Comma-separated exact origins (`https://app.example.com`, scheme, host and port) whose browsers may call the API; `*` for any, only when set explicitly. Preflights permit the document\'s methods and the `Authorization`, `Content-Type` and `X-Request-Id` headers; answers to a listed origin carry `Access-Control-Allow-Origin` with that origin and `Vary: Origin`. Other origins get no CORS header. The docs and probes never answer cross-origin.' })),
    VALIDATE_RESPONSES: oneOf(['true', 'false'], { default: 'false', description: 'Checks every answer of a handler against the document (its status, body and declared headers) before it is sent; one that breaks it answers 500 and logs which operation and property. `npm run dev` and the tests turn it on; it costs a validation per answer.' }),
    TRUST_PROXY: string({ default: 'false', description: 'Whose `X-Forwarded-*` headers to believe (Fastify\'s `trustProxy`): `true` (any peer), a hop count, or a comma-separated list of addresses and CIDRs (`10.0.0.0/8,::1`; also `loopback`). `false`: forwarded headers are ignored.' })
  },
  read: ({ values, problem }) => ({
    port: values.PORT,
    host: values.HOST,
    bodyLimit: values.BODY_LIMIT_BYTES,
    partLimit: values.PART_LIMIT_BYTES,
    maxParts: values.MAX_PARTS,
    maxHeaderBytes: values.MAX_HEADER_BYTES,
    requestTimeout: values.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: values.KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: values.MAX_CONNECTIONS,
    maxEventLoopDelay: values.MAX_EVENT_LOOP_DELAY_MS,
    shutdownTimeout: values.SHUTDOWN_TIMEOUT_MS,
    validateResponses: values.VALIDATE_RESPONSES === 'true',
    corsOrigins: corsOrigins(values.CORS_ORIGINS, problem),
    trustProxy: trustProxy(values.TRUST_PROXY, problem)
  })
})

export type HttpConfig = ReturnType<typeof httpConfig.read>

/** CORS_ORIGINS: exact origins (scheme://host[:port]), comma-separated, or `*`. */
function corsOrigins (value: string | undefined, problem: (message: string) => void): string[] {
  if (value === undefined || value.trim() === '') return []
  const origins = value.split(',').map((origin) => origin.trim())
  const bad = origins.filter((origin) => origin !== '*' && !isOrigin(origin))
  if (bad.length > 0) problem(`CORS_ORIGINS must list origins such as https://app.example.com (scheme, host and port only), or *; "${bad.join('", "')}" is not one`)
  return origins
}

function isOrigin (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value && HOST_NAME.test(url.hostname)
  } catch {
    return false
  }
}

// proxy-addr's names for address ranges, which Fastify's trustProxy accepts too.
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** TRUST_PROXY: true, false, a hop count, or a comma-separated list of addresses and CIDRs. */
function trustProxy (value: string, problem: (message: string) => void): boolean | number | string[] {
  if (value === 'false') return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) return Number(value)
  const entries = value.split(',').map((entry) => entry.trim())
  const bad = entries.filter((entry) => {
    if (PROXY_RANGES.has(entry)) return false
    const [address, prefix, ...rest] = entry.split('/')
    const version = isIP(address)
    if (version === 0 || rest.length > 0) return true
    return prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128))
  })
  if (bad.length > 0) problem(`TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses and CIDRs; "${bad.join('", "')}" is none of those`)
  return entries
}
