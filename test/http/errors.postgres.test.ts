// The HTTP-level suite test/http/errors.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('./errors.test.ts')
