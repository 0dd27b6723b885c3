// An operation the document gives no operationId is named from its method and path, so that a
// handler, a type and a trace can name it: the method, then each segment of the path in
// PascalCase, a parameter's as By and its name. GET /users/{user-id}/repos is getUsersByUserIdRepos,
// and GET / is get. The name changes only when the method or the path does.

const words = (text: string): string => text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word) => word[0].toUpperCase() + word.slice(1)).join('')

export function operationIdOf (method: string, path: string): string {
  const segments = path.split('/').filter(Boolean).map((segment) => segment.replace(/\{([^}]*)\}/g, (_match, name: string) => `By ${name} `))
  return method.toLowerCase() + segments.map(words).join('')
}
