import { isObject } from '../schemas/schema-at.ts'
import { concreteType } from './bodies.ts'

// JSON Merge Patch (RFC 7396): how the mock applies a patch sent in its media type, and what the
// verifier holds a read to after one.

/** Whether a body's media type is JSON Merge Patch's. */
export const isMergePatch = (type: string): boolean => concreteType(type).toLowerCase() === 'application/merge-patch+json'

/** RFC 7396: members set, null removes, objects merged within. */
export function mergePatch (target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {}
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name]
    else out[name] = mergePatch(out[name], value)
  }
  return out
}
