import pg from 'pg'
import t from 'tap'
import { buildTestApp, post, testConfig } from '../helpers/app.ts'
import { makeCertificates } from '../helpers/certificates.ts'
import { postgresUser } from '../helpers/embedded-postgres.ts'
import { startPostgres } from '../helpers/postgres.ts'

// TLS to PostgreSQL as an operator writes it in DATABASE_URL: sslmode=verify-full with the CA's
// certificate connects encrypted; a server whose certificate another CA signed, or that answers
// under another name, stops the start.

t.test('sslmode=verify-full: encrypted with the right CA, refused with another, or under another name', async (t) => {
  const user = await postgresUser()
  const ours = makeCertificates('127.0.0.1', user)
  const other = makeCertificates('127.0.0.1', user)
  const server = await startPostgres({ settings: { ssl: 'on', ssl_cert_file: ours.cert, ssl_key_file: ours.key } })
  const tls = (ca: string, host = '127.0.0.1'): string => {
    const url = new URL(server.url)
    url.hostname = host
    url.search = `?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`
    return url.href
  }

  const app = await buildTestApp(t, await testConfig(t, { DATABASE_URL: tls(ours.ca) }))
  t.equal((await post(app, { id: 1, name: 'Fern' })).statusCode, 200, 'the service starts and stores over TLS')
  const client = new pg.Client({ connectionString: server.url })
  await client.connect()
  t.teardown(() => client.end())
  const { rows } = await client.query<{ ssl: boolean, version: string }>(
    "SELECT ssl, version FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
  t.ok(rows.length > 0 && rows.every((row) => row.ssl), `every connection of the service is encrypted (${rows.map((row) => row.version).join(', ')})`)

  await t.rejects(buildTestApp(t, await testConfig(t, { DATABASE_URL: tls(other.ca) })), /self[- ]signed certificate|unable to verify|certificate/i, 'a certificate from another CA stops the start')
  await t.rejects(buildTestApp(t, await testConfig(t, { DATABASE_URL: tls(ours.ca, 'localhost') })), /does not match|altnames|Hostname\/IP/i, 'and so does a name the certificate does not hold')
})
