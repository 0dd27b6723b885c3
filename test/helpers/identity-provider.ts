import { randomUUID } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'

// An identity provider of the test's own, on 127.0.0.1: OIDC discovery and a JWKS, shaped as
// Keycloak's (an issuer under /realms/<name>). It counts every fetch, can rotate its keys, answer
// 500, hang, or name another issuer; tokens are minted with jose, as a provider would.

export type Alg = 'RS256' | 'ES256' | 'EdDSA'
export const AUDIENCE = 'plant-store'

interface SigningKey { kid: string, alg: Alg, privateKey: CryptoKey, publicJwk: JWK }

async function signingKey (alg: Alg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const kid = randomUUID()
  return { kid, alg, privateKey, publicJwk: { ...await exportJWK(publicKey), kid, alg, use: 'sig' } }
}

export interface MintOptions {
  alg?: Alg
  /** Claims over the defaults (iss, aud, sub, scope, iat, exp in 5 minutes); undefined removes one. */
  claims?: Record<string, unknown>
  /** Header fields over the defaults (alg, kid, typ at+jwt). */
  header?: Record<string, unknown>
  /** Sign with this key instead of the provider's current one for `alg`. */
  key?: SigningKey
}

export interface Provider {
  issuer: string
  /** Fetches so far, by path. */
  fetches: { discovery: number, jwks: number }
  /** How it answers: normally, 500, or never. */
  mode: 'up' | 'error' | 'hang'
  /** Replaces the key of `alg` with a new one (new kid); the old one is no longer published. */
  rotate: (alg?: Alg) => Promise<void>
  /** A key the provider does not publish, for the attacker's tokens. */
  foreignKey: (alg?: Alg) => Promise<SigningKey>
  mint: (options?: MintOptions) => Promise<string>
  /** The issuer the discovery document names (a mismatch when changed). */
  discoveredIssuer: string
  /** The jwks_uri the discovery document names; undefined: the provider's own. */
  discoveredJwksUri?: string
  /** The public key of the current RS256 key, as PEM text: the algorithm-confusion secret. */
  publicPem: () => Promise<string>
}

/** Whoever stops what the helpers start: a tap test, or the bench. */
export interface Owner { teardown: (close: () => unknown) => void }

export async function startProvider (t: Owner, { realm = 'plants' }: { realm?: string } = {}): Promise<Provider> {
  const keys = new Map<Alg, SigningKey>()
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) keys.set(alg, await signingKey(alg))
  const sockets = new Set<Socket>()
  const json = (response: ServerResponse, body: unknown) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  }
  const server = createServer((request, response) => {
    const path = new URL(request.url!, 'http://x').pathname
    const kind = path.endsWith('/.well-known/openid-configuration') ? 'discovery' : path.endsWith('/protocol/openid-connect/certs') ? 'jwks' : undefined
    if (kind !== undefined) provider.fetches[kind]++
    if (provider.mode === 'hang') return // never answers; closed when the test ends
    if (provider.mode === 'error' || kind === undefined) {
      response.writeHead(kind === undefined ? 404 : 500).end()
      return
    }
    if (kind === 'discovery') json(response, { issuer: provider.discoveredIssuer, jwks_uri: provider.discoveredJwksUri ?? `${provider.issuer}/protocol/openid-connect/certs` })
    else json(response, { keys: [...keys.values()].map((key) => key.publicJwk) })
  })
  server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/${realm}`

  const provider: Provider = {
    issuer,
    discoveredIssuer: issuer,
    fetches: { discovery: 0, jwks: 0 },
    mode: 'up',
    async rotate (alg = 'RS256') { keys.set(alg, await signingKey(alg)) },
    foreignKey: async (alg = 'RS256') => await signingKey(alg),
    async mint ({ alg = 'RS256', claims = {}, header = {}, key = keys.get(alg)! } = {}) {
      const now = Math.floor(Date.now() / 1000)
      const payload: JWTPayload = { iss: issuer, aud: AUDIENCE, sub: 'client-1', scope: 'openid plants:write', iat: now, exp: now + 300, jti: randomUUID(), ...claims }
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name]
      return await new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt', ...header } as any).sign(key.privateKey)
    },
    async publicPem () {
      const { createPublicKey } = await import('node:crypto')
      return createPublicKey({ key: keys.get('RS256')!.publicJwk as any, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
    }
  }
  return provider
}

/** A server that counts the requests a token's header might send it to (jku, x5u): it must get none. */
export async function startBystander (t: Owner): Promise<{ url: string, requests: () => number }> {
  let requests = 0
  const server = createServer((_request, response) => { requests++; response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests }
}
