import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

// The service as a real process (src/server.ts under tsx), as an operator runs it.
const root = fileURLToPath(new URL('../', import.meta.url))

export function startServer (t: Test, env: Record<string, string>, cwd: string = t.testdir()) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/server.ts')], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.teardown(() => { child.kill('SIGKILL') })
  const listening = new Promise<{ url: string, token?: string }>((resolve, reject) => {
    child.stdout.on('data', () => {
      const url = /listening on (\S+)/.exec(stdout)?.[1]
      if (url !== undefined && /API docs/.test(stdout)) resolve({ url, token: /generated token:\n\s+(\S+)/.exec(stdout)?.[1] })
    })
    exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)))
  })
  listening.catch(() => {}) // a test that expects the start to fail awaits `exited` instead
  return { child, listening, exited, output: () => ({ stdout, stderr }) }
}

/** POST /plants over real HTTP, with a raw JSON body (so ids beyond 2^53 keep their digits). */
export function postPlant (baseUrl: string, token: string, body: string): Promise<Response> {
  return fetch(`${baseUrl}/plants`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body })
}
