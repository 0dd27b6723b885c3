import neostandard from 'neostandard'

// The Fastify ecosystem's style (standard), with its TypeScript rules.
export default neostandard({
  ts: true,
  ignores: ['dist/**', 'generated/**', 'test/openapi/type-fixtures/openapi.d.ts', 'coverage/**', '.tap/**']
})
