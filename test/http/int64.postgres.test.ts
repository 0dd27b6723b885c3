// The HTTP-level suite test/http/int64.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('./int64.test.ts')
