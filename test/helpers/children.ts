import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { onExit } from 'signal-exit'

// Every process a test starts (the service, PostgreSQL, LazyFS, strace, a command) leads a process
// group of its own, and the group is killed with SIGKILL when the test is done with it, and in any
// case when the test process ends: normally, on an uncaught error, or killed by tap's timeout
// (SIGALRM) or a signal, which signal-exit reports. What the child started itself (npm's node, a
// worker process) goes with its group, so nothing a test starts outlives it.

const groups = new Set<number>()

/** Kills a child's whole group at once; a group already gone is no error. */
export function killGroup (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {}
}

onExit(() => {
  for (const pid of groups) {
    try { process.kill(-pid, 'SIGKILL') } catch {}
  }
})

/** spawn, typed as it is, with the child leading a new process group that dies with this process. */
export const spawnGroup = ((command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess => {
  const child = spawn(command, args, { ...options, detached: true })
  if (child.pid !== undefined) {
    const pid = child.pid
    groups.add(pid)
    // Its members may outlive the leader; the group is forgotten only once it is killed.
    child.once('exit', () => { try { process.kill(-pid, 0) } catch { groups.delete(pid) } })
  }
  return child
}) as typeof spawn
