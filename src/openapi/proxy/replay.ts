import type { IncomingHttpHeaders } from 'node:http'
import { namesCredential, spelledQuery, wordsOf } from '../../http/credential-names.ts'
import type { apiKeyNames } from '../requests/security.ts'
import type { Secret } from '../verify/credentials.ts'
import { curlOf } from '../verify/curl.ts'
import { SENDERS_OWN } from './proxy.ts'

// A request that passed through the proxy as a curl command to the upstream, to send it again:
// its headers and body as they came, but the credentials. Those a request carries (Authorization,
// Proxy-Authorization, Cookie, every API key the document's schemes name, in a header or the
// query, and any header or query parameter whose name says it holds one, http/credential-names.ts)
// are shown as the shell variables a user sets ("$AUTHORIZATION", "$API_KEY_1", "$X_AUTH_TOKEN"),
// never their values: a log line or a report holds no credential.

const WHOLE = { authorization: 'AUTHORIZATION', 'proxy-authorization': 'PROXY_AUTHORIZATION', cookie: 'COOKIE' } as Record<string, string>

/** A name as a shell variable's: `x-api-key` and `apiKey` as X_API_KEY and API_KEY. */
const variableOf = (name: string): string => wordsOf(name).join('_').toUpperCase() || 'CREDENTIAL'

// A value this long is no other text of the request: hidden wherever it is (a token the body repeats).
// A shorter one ('0' of a `min_key`) is hidden where it is sent, and nowhere else: elsewhere it
// would be the host's address, another parameter's value.
const SECRET_CHARACTERS = 8

export function replayOf (upstream: string, keys: ReturnType<typeof apiKeyNames>, { method, url, headers, body }: { method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer }): string {
  const secrets: Secret[] = []
  const variables = new Map<string, string>()
  /** A credential's value hidden where it is sent: a mark (control characters, which no URL or header holds) that the command shows as its variable. */
  const hidden = (value: string, variable: string): string => {
    if (value === '') return value
    let name = variables.get(value)
    if (name === undefined) {
      // One variable, one value: a second name spelled alike gets a variable of its own.
      name = variable
      for (let n = 2; [...variables.values()].includes(name); n++) name = `${variable}_${n}`
      variables.set(value, name)
      if (value.length >= SECRET_CHARACTERS) secrets.push({ value, variable: name })
    }
    const mark = `\u0000${name}\u0000`
    secrets.push({ value: mark, variable: name })
    return mark
  }
  const sent: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SENDERS_OWN.has(name)) continue
    const text = Array.isArray(value) ? value.join(', ') : value
    const variable = WHOLE[name] ?? (keys.headers.includes(name) ? `API_KEY_${keys.headers.indexOf(name) + 1}` : namesCredential(name) ? variableOf(name) : undefined)
    sent[name] = variable === undefined ? text : hidden(text, variable)
  }
  // A key in the query, as the URL spells it.
  const pairs = spelledQuery(url).map(({ pair, name, value }) => {
    const at = keys.query.indexOf(name)
    const variable = at >= 0 ? `API_KEY_Q${at + 1}` : namesCredential(name) ? variableOf(name) : undefined
    return value === undefined || variable === undefined ? pair : `${pair.slice(0, pair.length - value.length)}${hidden(value, variable)}`
  })
  const path = pairs.length === 0 ? url : `${url.slice(0, url.indexOf('?'))}?${pairs.join('&')}`
  // The longest first: a value within another is replaced in it.
  secrets.sort((a, b) => b.value.length - a.value.length)
  return curlOf(upstream, { method, path, headers: sent, body: body?.length === 0 ? undefined : body }, secrets)
}
