import { relative } from 'node:path'
import { BaseResolver, bundle, createConfig } from '@redocly/openapi-core'
import { dump } from 'js-yaml'
import { DocumentError } from './document-error.ts'
import type { LoadedDocument } from './document.ts'

// A document split over several files, bundled into one with Redocly's bundler (the one
// openapi-typescript builds on): each file $ref'd, relative to the file that refers to it, in
// YAML or JSON, with the refs inside it, recursive schemas included. What it brings in goes under
// components, and every $ref of the result points into the document itself. Loaded only for a
// document that needs it (document.ts).

// A $ref to a URL is fetched once, at load: bounded, as a host that takes the connection and
// never answers would hold the start for fetch's own five minutes.
const REMOTE_REF_TIMEOUT_MS = 10_000

/** The document at `path` and every file it refers to, as one; `name` is how messages name the entry. */
export async function bundleDocument (path: string, name: string, { remoteTimeoutMs = REMOTE_REF_TIMEOUT_MS } = {}): Promise<LoadedDocument> {
  const fetchBounded = async (url: string, init: RequestInit): Promise<Response> => {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(remoteTimeoutMs) })
    } catch (err) {
      // A plain error: the bundler writes its own words into the message, which a DOMException's will not take.
      throw new Error((err as Error).name === 'TimeoutError' ? `no answer from ${url} within ${remoteTimeoutMs / 1000} s` : (err as Error).message)
    }
  }
  const externalRefResolver = new BaseResolver({ http: { headers: [], customFetch: fetchBounded } })
  const result = await bundle({ ref: path, config: await createConfig({}), dereference: false, externalRefResolver })
  const problem = result.problems.find((p) => p.severity === 'error') ?? result.problems[0]
  if (problem !== undefined) {
    const where = problem.location?.[0]
    const file = where?.source?.absoluteRef === undefined ? name : relative(process.cwd(), where.source.absoluteRef)
    throw new DocumentError(file, where?.pointer ?? '', problem.message.replace(/^Can't resolve \$ref: /, 'has a $ref that cannot be resolved: '))
  }
  const document = result.bundle.parsed
  return {
    text: dump(document, { lineWidth: -1, noRefs: true }),
    document,
    files: [path, ...[...result.fileDependencies].filter((file) => file !== path)]
  }
}
