// The HTTP-level suite test/plants.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('../plants.test.js')
