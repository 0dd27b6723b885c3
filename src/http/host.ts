import { isIP } from 'node:net'

// A host name or a bracketed IP literal, as the service accepts one in a URL it checks (an
// origin in CORS_ORIGINS) or builds (the served document's base_url): nothing that could break
// out of the URL.
const HOST = String.raw`(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])`

/** A host alone, as URL.hostname gives it. */
export const HOST_NAME = new RegExp(`^${HOST}$`)

/** A host with an optional port, as a Host header gives it. */
export const HOST_AND_PORT = new RegExp(String.raw`^${HOST}(?::\d{1,5})?$`)

/**
 * A URL the service trusts for what it fetches (an identity provider's issuer and key set): HTTPS,
 * or plain HTTP to a loopback host only (a provider on the same machine: nothing on the wire).
 */
export function isHttpsOrLoopback (value: string): boolean {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))
  return url.protocol === 'https:' || (url.protocol === 'http:' && loopback)
}
