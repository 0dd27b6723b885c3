// The full run of the hostile-input properties of test/http/hostile.test.ts: 10,000 cases (two
// properties of 5,000) on SQLite; hostile.postgres.system.test.ts runs them on PostgreSQL.
process.env.HOSTILE_RUNS ??= '5000'
await import('./hostile.test.ts')
