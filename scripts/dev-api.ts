// npm run dev's service: src/server.ts run by tsx watch, which restarts it on a change of its code,
// and started again here on a change of any file of its document (watch-document.ts): a split
// document's files are no module tsx could see.
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DOCUMENT_PATH } from '../src/openapi/document/document.ts'
import { watchDocument } from './watch-document.ts'

const root = fileURLToPath(new URL('../', import.meta.url))
let child: ChildProcess | undefined
const start = (): void => {
  child = spawn(join(root, 'node_modules/.bin/tsx'), ['watch', '--clear-screen=false', 'src/server.ts'], { cwd: root, stdio: 'inherit', env: { VALIDATE_RESPONSES: 'true', ...process.env } })
}
const restart = async (): Promise<void> => {
  const running = child
  if (running !== undefined && running.exitCode === null) {
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGTERM')
    await exited
  }
  start()
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { child?.kill(signal); process.exit(0) })
start()
await watchDocument(DOCUMENT_PATH, restart)
