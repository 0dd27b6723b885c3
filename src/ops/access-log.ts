import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { withoutCredentials } from '../http/credential-names.ts'
import type { LogLevel } from './config.ts'

// One access-log line per request, written when the answer has gone out, instead of Fastify's
// two (incoming and completed): at info level each line costs about as much as a whole request.
// The line holds the request id (reqId, bound by Fastify), method, url, status, response time,
// the client's address (the proxy's client, with TRUST_PROXY) and, once the bearer guard has passed
// it, the principal: a JWT's subject, or a static key's identity (a prefix of its hash). Never
// headers, so never a token; nor a credential's value in the query (an API key a document puts
// there, RFC 6750's access_token): the URL is logged without them (http/credential-names.ts).

const LOGGED = new Set<LogLevel>(['info', 'debug', 'trace'])

export class AccessLog extends LogController {
  readonly #enabled: boolean
  readonly #queryCredentials: ReadonlySet<string>

  /** `queryCredentials`: the query parameters that hold one whatever their names (a document's API keys). */
  constructor (level: LogLevel, queryCredentials: ReadonlySet<string> = new Set()) {
    super()
    this.#enabled = LOGGED.has(level)
    this.#queryCredentials = queryCredentials
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!this.#enabled) return
    // Milliseconds to the microsecond: a shorter line than the float's 17 digits.
    const responseTime = Math.round(reply.elapsedTime * 1000) / 1000
    const line = { method: request.method, url: withoutCredentials(request.originalUrl, this.#queryCredentials), statusCode: reply.statusCode, responseTime, remoteAddress: request.ip, principal: request.credential?.principal }
    // An error here is the connection's (the client went away mid-answer), not the request's.
    if (error != null) reply.log.warn({ ...line, err: error }, 'request')
    else reply.log.info(line, 'request')
  }
}
