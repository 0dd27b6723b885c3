import neostandard from 'neostandard'

// The Fastify ecosystem's style (standard), with its TypeScript rules.
export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'generated/**', 'test/openapi/type-fixtures/*.d.ts', 'coverage/**', '.tap/**']
  }),
  {
    // Node runs our TypeScript as it is (type stripping): a module of ours is imported by its .ts
    // name, which tsc rewrites to .js in dist/.
    rules: {
      'no-restricted-syntax': ['error', ...['ImportDeclaration[importKind="value"]', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'ImportExpression'].map((node) => ({
        selector: `${node} > Literal.source[value=/^\\.\\.?\\/.*\\.js$/]`,
        message: 'Import a module of ours by its .ts name: Node runs the source as it is.'
      }))]
    }
  }
]
