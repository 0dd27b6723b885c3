import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { killGroup, spawnGroup } from './children.ts'
import { logExcerpt } from './log-file.ts'
import type { NodeCommand } from './npm-script.ts'

// The service as a real process, as an operator runs it.
const root = fileURLToPath(new URL('../../', import.meta.url))
// Seconds under a loaded CI; never a minute.
const START_TIMEOUT_MS = 60_000

/** The service from its source; `script` names another way to run it (an npm script's, nodeCommandOf): its variables, and Node's arguments after its own flags. */
export function startServer (t: Test, env: Record<string, string>, cwd: string = t.testdir(), nodeArgs: string[] = [], script: NodeCommand = { env: {}, args: [join(root, 'src/server.ts')] }) {
  const child = spawnGroup(process.execPath, [...nodeArgs, ...script.args], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'warn', ...script.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.teardown(() => { killGroup(child) })
  const listening = new Promise<{ url: string, token?: string }>((resolve, reject) => {
    child.stdout.on('data', () => {
      const url = /listening on (\S+)/.exec(stdout)?.[1]
      if (url !== undefined && /API docs/.test(stdout)) resolve({ url, token: /token kept in [^\n]*:\n\s+(\S+)/.exec(stdout)?.[1] })
    })
    exited.then((code) => reject(new Error(`exited ${code}: ${logExcerpt('service', stdout + stderr)}`)))
    // Bounded, so a start that hangs fails the test with what the service said, not the file's timeout.
    setTimeout(() => reject(new Error(`not listening after ${START_TIMEOUT_MS} ms: ${logExcerpt('service', stdout + stderr)}`)), START_TIMEOUT_MS).unref()
  })
  listening.catch(() => {}) // a test that expects the start to fail awaits `exited` instead
  return { child, listening, exited, output: () => ({ stdout, stderr }) }
}

/** POST /plants over real HTTP, with a raw JSON body (so ids beyond 2^53 keep their digits). */
export function postPlant (baseUrl: string, token: string, body: string): Promise<Response> {
  return fetch(`${baseUrl}/plants`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body })
}
