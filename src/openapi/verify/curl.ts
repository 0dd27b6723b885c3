import type { Secret } from './credentials.ts'
import type { HttpRequest } from './spelling.ts'

// A request as a curl command, so that whoever reads a violation can send it again: every header
// and the body exactly as sent, and each credential as the shell variable that holds it
// ("$VERIFY_BEARER"), never its value.

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/g

/** Text as one shell word: single-quoted, each secret in it as its variable in double quotes; $'…' where it holds a control character. */
function quoted (text: string, secrets: Secret[]): string {
  const found = secrets.find((secret) => secret.value !== '' && text.includes(secret.value))
  if (found !== undefined) {
    return text.split(found.value).map((part) => part === '' ? '' : quoted(part, secrets)).join(`"$${found.variable}"`)
  }
  if (text.match(CONTROL) !== null) {
    return `$'${text.replace(/[\\']/g, (c) => `\\${c}`).replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}'`
  }
  return `'${text.replace(/'/g, "'\\''")}'`
}

export function curlOf (baseUrl: string, { method, path, headers, body }: HttpRequest, secrets: Secret[]): string {
  // HEAD's answer has no body: curl's --head knows not to wait for one.
  const words = ['curl', '-sS', ...(method === 'HEAD' ? ['--head'] : ['-i', '-X', method]), quoted(`${baseUrl.replace(/\/$/, '')}${path}`, secrets)]
  for (const [name, value] of Object.entries(headers)) words.push('-H', quoted(`${name}: ${value}`, secrets))
  if (body !== undefined) words.push('--data-binary', quoted(Buffer.isBuffer(body) ? body.toString('latin1') : body, secrets))
  return words.join(' ')
}
