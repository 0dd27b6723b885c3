// An operation the document gives no operationId is named from its method and path, so that a
// handler, a type and a trace can name it: the method, then each segment of the path in
// PascalCase, a parameter's as By and its name. GET /users/{user-id}/repos is getUsersByUserIdRepos,
// and GET / is get. Where another operation has that name already (its own, or one made before it
// in the document), the next free number follows: GET /users/~ beside GET /users is getUsers2.
// The name changes only when the method or the path does, or such a neighbour comes or goes.

const words = (text: string): string => text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word) => word[0].toUpperCase() + word.slice(1)).join('')

function operationIdOf (method: string, path: string): string {
  const segments = path.split('/').filter(Boolean).map((segment) => segment.replace(/\{([^}]*)\}/g, (_match, name: string) => `By ${name} `))
  return method.toLowerCase() + segments.map(words).join('')
}

/** An operation's own operationId, if it has one. */
export const ownOperationId = (operation: unknown): string | undefined => {
  const id = (operation as { operationId?: unknown } | null)?.operationId
  return typeof id === 'string' && id !== '' ? id : undefined
}

/**
 * Every operation's operationId, in the document's order: its own, else one made from its method
 * and path that no other operation has. `paths` is the document's Paths Object.
 */
export function operationIdNamer (paths: Record<string, any>, methods: readonly string[]): (operation: unknown, method: string, path: string) => string {
  const taken = new Set(Object.values(paths).flatMap((item) => methods.map((method) => ownOperationId(item?.[method]))).filter((id) => id !== undefined))
  return (operation, method, path) => {
    const own = ownOperationId(operation)
    if (own !== undefined) return own
    const made = operationIdOf(method, path)
    let id = made
    for (let n = 2; taken.has(id); n++) id = `${made}${n}`
    taken.add(id)
    return id
  }
}
