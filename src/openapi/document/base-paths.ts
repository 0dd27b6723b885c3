import type { OpenApiDocument } from './document.ts'

// Where a document's paths begin on its servers. A client made from the document (a generated
// SDK, Swagger UI's "Try it out") sends `/v1/pets/1` where a server is `https://api.example.com/v1`
// and the document's path is `/pets/{petId}`. The mock and the proxy take a request either way.

/**
 * The base paths of the document's servers (`/v1` of `https://api.example.com/v1`, each variable at
 * its default), longest first; not one that some path of the document begins with, which is taken
 * as part of that path.
 */
export function basePaths (document: OpenApiDocument): string[] {
  const paths = Object.keys(document.paths ?? {})
  const servers: Array<{ url?: unknown, variables?: Record<string, { default?: unknown }> }> = Array.isArray(document.servers) ? document.servers : []
  return [...new Set(servers.flatMap((server): string[] => {
    // Each variable at its default, as the document's clients first see it.
    const url = String(server.url ?? '').replace(/\{([^}]*)\}/g, (_whole, name: string) => String(server.variables?.[name]?.default ?? ''))
    try {
      return [new URL(url, 'http://server').pathname.replace(/\/+$/, '')]
    } catch {
      return []
    }
  }))].filter((base) => base !== '' && !paths.some((path) => path === base || path.startsWith(`${base}/`)))
    .sort((a, b) => b.length - a.length)
}

/**
 * A request target as the document's paths read it, `/v1/pets/1?x=1` as `/pets/1?x=1`, with the
 * base it was sent under; none where the document's servers have no base path of their own.
 */
export function documentTarget (document: OpenApiDocument): ((target: string) => { target: string, base?: string }) | undefined {
  const bases = basePaths(document)
  if (bases.length === 0) return undefined
  return (target) => {
    const base = bases.find((base) => target.startsWith(base) && /^([/?]|$)/.test(target.slice(base.length)))
    if (base === undefined) return { target }
    const rest = target.slice(base.length)
    return { target: rest.startsWith('/') ? rest : `/${rest}`, base }
  }
}
