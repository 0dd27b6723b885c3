import t from 'tap'
import { loadConfig } from '../../src/config.ts'
import { buildTestApp, captureLog, testConfig } from '../helpers/app.ts'

// Behind a TLS-terminating proxy, the document advertises the address clients use, and the logs
// show the client; without TRUST_PROXY, forwarded headers are anyone's to send, and are ignored.

const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'plants.example.com', 'x-forwarded-for': '203.0.113.7' }

async function behind (t: Parameters<typeof buildTestApp>[0], env: Record<string, string>) {
  const { logStream, lines } = captureLog()
  const app = await buildTestApp(t, await testConfig(t, { LOG_LEVEL: 'info', ...env }), { logStream })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrls = async (headers: Record<string, string>) => {
    const yaml = await (await fetch(`${base}/openapi.yaml`, { headers })).text()
    return {
      json: ((await (await fetch(`${base}/openapi.json`, { headers })).json()) as any).servers[0].variables.base_url.default,
      docs: ((await (await fetch(`${base}/docs/json`, { headers })).json()) as any).servers[0].variables.base_url.default,
      yaml: /default: "([^"]+)"/.exec(yaml)?.[1]
    }
  }
  return { base, lines, baseUrls }
}

t.test('TRUST_PROXY unset: forwarded headers change nothing', async (t) => {
  const { base, lines, baseUrls } = await behind(t, {})
  t.same(await baseUrls(FORWARDED), { json: base, docs: base, yaml: base }, 'the base URL is the address the client reached')
  t.ok(lines.filter((line) => line.msg === 'request').every((line) => line.remoteAddress === '127.0.0.1'), 'the log shows the peer, not a claimed client')
})

t.test('TRUST_PROXY set: the proxy\'s X-Forwarded-Proto and -Host shape base_url, the client is logged', async (t) => {
  for (const trustProxy of ['true', '1', '127.0.0.1', '127.0.0.0/8, ::1']) {
    t.test(JSON.stringify(trustProxy), async (t) => {
      const { base, lines, baseUrls } = await behind(t, { TRUST_PROXY: trustProxy })
      const url = 'https://plants.example.com'
      t.same(await baseUrls(FORWARDED), { json: url, docs: url, yaml: url })
      t.same(await baseUrls({ ...FORWARDED, 'x-forwarded-host': 'plants.example.com:8443' }), { json: `${url}:8443`, docs: `${url}:8443`, yaml: `${url}:8443` }, 'with a port')
      t.same(await baseUrls({}), { json: base, docs: base, yaml: base }, 'no forwarded headers: the address reached')
      t.same(lines.filter((line) => line.msg === 'request').map((line) => line.remoteAddress), [...Array(6).fill('203.0.113.7'), ...Array(3).fill('127.0.0.1')], 'the log shows the client the proxy names, or the peer when it names none')
    })
  }
})

t.test('a proxy that is not trusted is not believed', async (t) => {
  const { base, baseUrls } = await behind(t, { TRUST_PROXY: '10.0.0.1' })
  t.same(await baseUrls(FORWARDED), { json: base, docs: base, yaml: base })
})

t.test('a host that could break out of the URL is never advertised', async (t) => {
  const { base, baseUrls } = await behind(t, { TRUST_PROXY: 'true' })
  for (const host of ['evil.example/"><script>', 'a b', 'x@y', 'plants.example.com:99999999']) {
    const got = await baseUrls({ ...FORWARDED, 'x-forwarded-host': host })
    t.same(got, { json: `https://${base.slice('http://'.length)}`, docs: `https://${base.slice('http://'.length)}`, yaml: `https://${base.slice('http://'.length)}` }, `${host}: the address reached instead`)
  }
  const scheme = await baseUrls({ ...FORWARDED, 'x-forwarded-proto': 'javascript' })
  t.equal(scheme.json, 'http://plants.example.com', 'a scheme other than https is http')
})

t.test('TRUST_PROXY parsing', async (t) => {
  t.equal(loadConfig({}).http.trustProxy, false)
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).http.trustProxy, false)
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).http.trustProxy, true)
  t.equal(loadConfig({ TRUST_PROXY: '2' }).http.trustProxy, 2)
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,fd00::/8,loopback' }).http.trustProxy, ['10.0.0.1', '192.168.0.0/16', 'fd00::/8', 'loopback'])
  t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.1,proxy.local' }), /TRUST_PROXY must be .*; "proxy.local" is none of those/)
  t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' }), /"10\.0\.0\.0\/33"/)
  t.throws(() => loadConfig({ TRUST_PROXY: 'yes' }), /TRUST_PROXY/)
})
