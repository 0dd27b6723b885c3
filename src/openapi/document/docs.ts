import etag from '@fastify/etag'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HOST_AND_PORT } from '../../http/host.ts'
import type { LoadedDocument, OpenApiDocument } from './document.ts'
import { DOCS_CSP, DOCS_HEADERS, setHeaders } from '../../security/headers.ts'

export const DOCS_PREFIX = '/docs'

// The document as served describes the instance serving it: every server's {base_url}
// variable defaults to the address the client reached, as the Host header says, or behind a
// trusted proxy (TRUST_PROXY) as X-Forwarded-Proto and X-Forwarded-Host say; Fastify ignores
// forwarded headers from anyone else. The committed file stays as it is.

function baseUrlOf (request: FastifyRequest): string {
  const protocol = request.protocol === 'https' ? 'https' : 'http'
  if (HOST_AND_PORT.test(request.host)) return `${protocol}://${request.host}`
  // No usable host given: the address this connection reached.
  const { localAddress = '127.0.0.1', localPort } = request.socket
  return `${protocol}://${localAddress.includes(':') ? `[${localAddress}]` : localAddress}:${localPort}`
}

export function documentForInstance (document: OpenApiDocument, baseUrl: string): OpenApiDocument {
  return {
    ...document,
    servers: (document.servers ?? []).map((server: any) => server.variables?.base_url === undefined
      ? server
      : { ...server, variables: { ...server.variables, base_url: { ...server.variables.base_url, default: baseUrl } } })
  }
}

/**
 * The YAML text with only the base_url defaults rewritten: comments and layout are kept byte
 * for byte. The yaml package's syntax tree knows where each value stands in the text; it is
 * loaded on the first request for /openapi.yaml, not at boot.
 */
export async function yamlForInstance (text: string): Promise<(baseUrl: string) => string> {
  // Its CommonJS exports, through `default`: named ones a bundle's import() does not see.
  const { isMap, isScalar, isSeq, parseDocument } = (await import('yaml')).default
  const servers = parseDocument(text).get('servers', true)
  const ranges: Array<[number, number]> = []
  for (const server of isSeq(servers) ? servers.items : []) {
    const value = isMap(server) ? server.getIn(['variables', 'base_url', 'default'], true) : undefined
    if (isScalar(value) && value.range != null) ranges.push([value.range[0], value.range[1]])
  }
  return (baseUrl) => {
    let out = ''
    let at = 0
    for (const [start, end] of ranges) {
      out += text.slice(at, start) + JSON.stringify(baseUrl)
      at = end
    }
    return out + text.slice(at)
  }
}

/** What a document calls its API (info.title), as the docs page and the start-up line name it. */
export const titleOf = (document: OpenApiDocument): string => typeof document.info?.title === 'string' && document.info.title.trim() !== '' ? document.info.title : 'API'

/** Public documentation: Swagger UI from local assets, and the document itself. */
export async function docs (app: FastifyInstance, { loaded, title = titleOf(loaded.document) }: { loaded: LoadedDocument, title?: string }): Promise<void> {
  let yamlFor: Promise<(baseUrl: string) => string> | undefined
  setHeaders(app, DOCS_HEADERS)
  // An ETag on each answer (the page, the documents), so that a poller's conditional GET gets 304.
  await app.register(etag)
  await app.register(swagger, { mode: 'static', specification: { document: loaded.document as any } })
  await app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    theme: { title },
    staticCSP: DOCS_CSP,
    uiConfig: {
      // BaseLayout has no "Explore" bar that would load an arbitrary URL.
      layout: 'BaseLayout',
      // The page talks to this instance only: no call to the public validator badge service.
      validatorUrl: null,
      // Keep the token through a reload.
      persistAuthorization: true
    },
    // documentForInstance copies what it changes, so no deep clone per request is needed.
    transformSpecification: (spec, request) => documentForInstance(spec, baseUrlOf(request)),
    transformSpecificationClone: false
  })
  app.get('/openapi.yaml', { schema: { hide: true } }, async (request, reply) => {
    const forInstance = await (yamlFor ??= yamlForInstance(loaded.text))
    return reply.type('application/yaml; charset=utf-8').send(forInstance(baseUrlOf(request)))
  })
  app.get('/openapi.json', { schema: { hide: true } }, async (request) => documentForInstance(loaded.document, baseUrlOf(request)))
}
