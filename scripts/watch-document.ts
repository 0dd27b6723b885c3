// What `npm run dev` watches of the contract: every file of the document (a split one's too), read
// as the service reads it (src/openapi/document/document.ts); each change calls back, once a burst of saves
// is over, and the files are read again (a $ref to a new file adds it).
import { watch, type FSWatcher } from 'node:fs'
import { loadDocument } from '../src/openapi/document/document.ts'

// An editor's save is several writes; one callback for them all.
const SETTLE_MS = 150

export async function watchDocument (path: string, changed: () => void | Promise<void>): Promise<void> {
  let watchers: FSWatcher[] = []
  let timer: NodeJS.Timeout | undefined
  const files = async (): Promise<string[]> => {
    try {
      return (await loadDocument(path, { prebundled: '' })).files ?? [path]
    } catch {
      return [path] // a document that does not read yet: its entry, until it does
    }
  }
  const arm = async (): Promise<void> => {
    for (const watcher of watchers) watcher.close()
    watchers = (await files()).flatMap((file) => {
      try {
        return [watch(file, () => {
          clearTimeout(timer)
          timer = setTimeout(() => { Promise.resolve(changed()).finally(arm).catch(() => {}) }, SETTLE_MS)
        })]
      } catch {
        return [] // not there (yet): nothing to watch
      }
    })
  }
  await arm()
}
