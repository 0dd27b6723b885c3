// The HTTP-level suite test/http.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('../http.test.js')
