import type { IncomingHttpHeaders } from 'node:http'
import type { OpenApiDocument } from '../document/document.ts'
import type { Secret } from '../verify/credentials.ts'
import { curlOf } from '../verify/curl.ts'
import { SENDERS_OWN } from './proxy.ts'

// A request that passed through the proxy as a curl command to the upstream, to send it again:
// its headers and body as they came, but the credentials. Those a request carries (Authorization,
// Proxy-Authorization, Cookie, and every API key the document's schemes name, in a header or the
// query) are shown as the shell variables a user sets ("$AUTHORIZATION", "$API_KEY_1"), never
// their values: a log line or a report holds no credential.

const WHOLE = { authorization: 'AUTHORIZATION', 'proxy-authorization': 'PROXY_AUTHORIZATION', cookie: 'COOKIE' } as Record<string, string>

/** The names of the document's API keys: in headers (lowercase) and in the query. */
export function apiKeyNames (document: OpenApiDocument): { headers: string[], query: string[] } {
  const schemes = Object.values<any>(document.components?.securitySchemes ?? {}).filter((s) => s?.type === 'apiKey')
  return {
    headers: schemes.filter((s) => s.in === 'header').map((s) => String(s.name).toLowerCase()),
    query: schemes.filter((s) => s.in === 'query').map((s) => String(s.name))
  }
}

export function replayOf (upstream: string, keys: ReturnType<typeof apiKeyNames>, { method, url, headers, body }: { method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer }): string {
  const secrets: Secret[] = []
  const secret = (value: string, variable: string): void => { if (value !== '') secrets.push({ value, variable }) }
  const sent: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SENDERS_OWN.has(name)) continue
    const text = Array.isArray(value) ? value.join(', ') : value
    sent[name] = text
    if (WHOLE[name] !== undefined) secret(text, WHOLE[name])
    else if (keys.headers.includes(name)) secret(text, `API_KEY_${keys.headers.indexOf(name) + 1}`)
  }
  // A key in the query, as the URL spells it.
  for (const pair of (url.split('?')[1] ?? '').split('&')) {
    const [name, value = ''] = pair.split('=')
    const at = keys.query.indexOf(decodedComponent(name))
    if (at >= 0) secret(value, `API_KEY_Q${at + 1}`)
  }
  // The longest first: a value within another is replaced in it.
  secrets.sort((a, b) => b.value.length - a.value.length)
  return curlOf(upstream, { method, path: url, headers: sent, body: body?.length === 0 ? undefined : body }, secrets)
}

function decodedComponent (text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}
