import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'

// A throwaway certificate authority and a server certificate it signs, made with the openssl
// command: for the TLS tests, never for anything served.

export interface Certificates {
  ca: string
  cert: string
  key: string
}

const openssl = (dir: string, ...args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' }) }

/** A CA, and a certificate it signs for `host` (an IP address), its key readable only by `owner`. Removed when the file ends. */
export function makeCertificates (host: string, owner?: { uid: number, gid: number }): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=Plant Store test CA', '-keyout', 'ca.key', '-out', 'ca.crt')
  openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${host}`, '-keyout', 'server.key', '-out', 'server.csr')
  writeFileSync(join(dir, 'server.ext'), `subjectAltName = IP:${host}\n`)
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', 'server.ext', '-out', 'server.crt')
  chmodSync(dir, 0o755)
  chmodSync(join(dir, 'server.key'), 0o600)
  if (owner !== undefined) chownSync(join(dir, 'server.key'), owner.uid, owner.gid)
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key') }
}
