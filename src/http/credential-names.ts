// Credentials a request carries where nothing declares them: a gateway's key in a header, RFC
// 6750's access_token or an API key in the query. What is logged or shown of a request (the
// access log's URL, the proxy's curl commands) leaves out the value of every header or query
// parameter whose name says it holds one. A name taken wrongly costs a value in a log line; a
// credential missed would be in it.

const CREDENTIAL_WORDS: ReadonlySet<string> = new Set(['token', 'key', 'apikey', 'secret', 'password', 'passwd', 'session', 'sessionid', 'auth', 'credential', 'credentials', 'signature', 'sig', 'jwt', 'csrf', 'xsrf'])

/** A name's words, lowercase: `x-api-key`, `X_API_KEY` and `xApiKey` alike as x, api, key. */
export const wordsOf = (name: string): string[] => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== '')

/** Whether a header's or a query parameter's name says it holds a credential: `x-api-key`, `access_token`, `authToken`, not `author`. */
export const namesCredential = (name: string): boolean => wordsOf(name).some((word) => CREDENTIAL_WORDS.has(word))

/** A query parameter's name as the URL spells it, decoded; as spelled where it does not decode. */
function decodedName (spelled: string): string {
  try {
    return decodeURIComponent(spelled.replace(/\+/g, ' '))
  } catch {
    return spelled
  }
}

/** A URL's query, pair by pair as spelled: each pair's name decoded, its value as the URL spells it (none where the pair has no `=`). */
export function spelledQuery (url: string): Array<{ pair: string, name: string, value?: string }> {
  const start = url.indexOf('?')
  if (start === -1) return []
  return url.slice(start + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    return equals === -1 ? { pair, name: decodedName(pair) } : { pair, name: decodedName(pair.slice(0, equals)), value: pair.slice(equals + 1) }
  })
}

const REDACTED = '[Redacted]'

/** The path and query with the value of each credential in the query (by its name, or among `names`) as [Redacted]. */
export function withoutCredentials (url: string, names: ReadonlySet<string> = new Set()): string {
  const pairs = spelledQuery(url)
  if (pairs.length === 0) return url
  return `${url.slice(0, url.indexOf('?'))}?${pairs.map(({ pair, name, value }) =>
    value !== undefined && (names.has(name) || namesCredential(name)) ? `${pair.slice(0, pair.length - value.length)}${REDACTED}` : pair).join('&')}`
}
