import { resolve } from 'node:path'
import { redactUrl } from '../config/redact.ts'

// A store is named by a URL, as DATABASE_URL names it: sqlite:<path> for the embedded store (the
// path relative to the working directory), postgres:// or postgresql:// for PostgreSQL.

export type StoreUrl = { kind: 'sqlite', path: string } | { kind: 'postgres', url: string }

export const STORE_URL_FORMS = 'sqlite:<path> or postgres://user:password@host:port/database'

/** The store a URL names; throws, saying what is wrong, when it names none. */
export function parseStoreUrl (url: string): StoreUrl {
  if (/^sqlite:.+$/.test(url)) return { kind: 'sqlite', path: resolve(url.slice('sqlite:'.length)) }
  if (/^postgres(ql)?:\/\/.+$/.test(url)) return { kind: 'postgres', url }
  throw new Error(`"${redactUrl(url)}" is not a store URL: use ${STORE_URL_FORMS}`)
}
