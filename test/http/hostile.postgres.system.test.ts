// The full run of the hostile-input properties of test/http/hostile.test.ts, on PostgreSQL.
process.env.HOSTILE_RUNS ??= '5000'
process.env.TEST_BACKEND = 'postgres'
await import('./hostile.test.ts')
