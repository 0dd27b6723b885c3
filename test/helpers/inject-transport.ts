import type { FastifyInstance } from 'fastify'
import type { Transport } from '../../src/openapi/verify/verifier.ts'

/** The verifier's requests sent to an app in this process, through inject(): no socket, the same answers. */
export const injectTransport = (app: FastifyInstance): Transport => async ({ method, path, headers, body }) => {
  const answer = await app.inject({ method: method as any, url: path, headers, ...(body !== undefined && { payload: body }) })
  const answered: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(answer.headers)) answered[name] = Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value)
  return { status: answer.statusCode, headers: answered, body: answer.rawPayload }
}
