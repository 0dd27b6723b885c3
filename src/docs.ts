import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { LoadedDocument, OpenApiDocument } from './openapi/document.js'

export const DOCS_PREFIX = '/docs'

/** The document with its {base_url} server variable pointing at the instance that serves it. */
export function forInstance (document: OpenApiDocument, request: FastifyRequest): OpenApiDocument {
  const baseUrl = `${request.protocol}://${request.host}`
  return {
    ...document,
    servers: (document.servers ?? []).map((server: any) => server.variables?.base_url === undefined
      ? server
      : { ...server, variables: { ...server.variables, base_url: { ...server.variables.base_url, default: baseUrl } } })
  }
}

/** Public documentation: Swagger UI from local assets, and the document itself. */
export async function docs (app: FastifyInstance, { loaded }: { loaded: LoadedDocument }): Promise<void> {
  await app.register(swagger, { mode: 'static', specification: { document: loaded.document as any } })
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // No call to the public validator badge service: the page only talks to this instance.
    uiConfig: { validatorUrl: null, persistAuthorization: true },
    // Try it out must reach this instance, whatever HOST and PORT it listens on.
    transformSpecification: (spec, request) => forInstance(spec, request),
    transformSpecificationClone: true
  })
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(loaded.text))
  app.get('/openapi.json', { schema: { hide: true } }, async () => loaded.document)
}
