// The hostile-input properties of test/http/hostile.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('./hostile.test.ts')
