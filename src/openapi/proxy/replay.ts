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

export function replayOf (upstream: string, keys: ReturnType<typeof apiKeyNames>, { method, url, headers, body }: { method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer }): string {
  const secrets: Secret[] = []
  const secret = (value: string, variable: string): void => {
    if (value === '') return
    // One variable, one value: a second name spelled alike gets a variable of its own.
    let name = variable
    for (let n = 2; secrets.some((other) => other.variable === name && other.value !== value); n++) name = `${variable}_${n}`
    secrets.push({ value, variable: name })
  }
  const sent: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SENDERS_OWN.has(name)) continue
    const text = Array.isArray(value) ? value.join(', ') : value
    sent[name] = text
    if (WHOLE[name] !== undefined) secret(text, WHOLE[name])
    else if (keys.headers.includes(name)) secret(text, `API_KEY_${keys.headers.indexOf(name) + 1}`)
    else if (namesCredential(name)) secret(text, variableOf(name))
  }
  // A key in the query, as the URL spells it.
  for (const { name, value = '' } of spelledQuery(url)) {
    const at = keys.query.indexOf(name)
    if (at >= 0) secret(value, `API_KEY_Q${at + 1}`)
    else if (namesCredential(name)) secret(value, variableOf(name))
  }
  // The longest first: a value within another is replaced in it.
  secrets.sort((a, b) => b.value.length - a.value.length)
  return curlOf(upstream, { method, path: url, headers: sent, body: body?.length === 0 ? undefined : body }, secrets)
}
