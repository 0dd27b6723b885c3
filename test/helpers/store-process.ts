// The store alone in a process of its own, driven by JSON lines on standard input and answering
// on standard output: for tests that fault its disk with strace, as they do the service's.
// Usage: store-process.ts DATABASE_URL STORE_TIMEOUT_MS
import { createInterface } from 'node:readline'
import { openStore } from '../../src/store/open.ts'

const store = await openStore(process.argv[2], { pgPoolSize: 2, timeoutMs: Number(process.argv[3]) })
const answer = (line: object): void => { process.stdout.write(JSON.stringify(line) + '\n') }
answer({ ready: true })

for await (const line of createInterface({ input: process.stdin })) {
  const { seq, op, id, name } = JSON.parse(line) as { seq: number, op: 'create' | 'get', id: string, name?: string }
  const work = op === 'create' ? store.create({ id: BigInt(id), name: name! }) : store.get(BigInt(id)).then((plant) => plant?.name ?? null)
  work.then((value) => answer({ seq, value }), (err: { code?: string }) => answer({ seq, error: err.code }))
}
await store.close()
