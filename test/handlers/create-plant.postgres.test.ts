// The HTTP-level suite test/handlers/create-plant.test.ts, against a real PostgreSQL.
process.env.TEST_BACKEND = 'postgres'
await import('./create-plant.test.ts')
