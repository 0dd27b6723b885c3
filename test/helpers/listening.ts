import type { ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/** Resolves once `child` (`what`) accepts TCP connections on 127.0.0.1:`port`; fails when it exits, or past `ms`. */
export async function listeningOn (port: number, child: ChildProcess, what: string, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; ;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`)
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.on('error', () => resolve(false))
    })
    if (up) return
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${ms} ms`)
    await sleep(20)
  }
}
