import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { onExit } from 'signal-exit'

// Every process a test starts (the service, PostgreSQL, LazyFS, strace, a command) leads a process
// group of its own, and the group is killed with SIGKILL when the test is done with it, when its
// leader exits, and in any case when the test process ends: normally, on an uncaught error, or
// killed by tap's timeout (SIGALRM) or a signal, which signal-exit reports. What the child started
// itself (npm's node, a worker process) goes with its group, so nothing a test starts outlives it.

// A group is signalled only while its leader has not exited: until Node reaps the leader its pid,
// the group's id, is no one else's; after, the id is free for the next process, and on a machine
// whose pids wrap at 32,768 it soon belongs to another (another test's service, killed by a stale
// teardown: what failed the power-loss test now and then). So what is left of a group when its
// leader exits is killed at that moment, while it still holds the id, and never later.
const leaders = new Set<ChildProcess>()

const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null

/** Kills a child's whole group at once, while its leader lives; a group whose leader has exited was killed then. */
export function killGroup (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined || !alive(child)) return
  try {
    process.kill(-child.pid, signal)
  } catch {}
}

onExit(() => {
  for (const child of leaders) killGroup(child)
})

/** spawn, typed as it is, with the child leading a new process group that dies with it, and with this process. */
export const spawnGroup = ((command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess => {
  const child = spawn(command, args, { ...options, detached: true })
  if (child.pid !== undefined) {
    const pid = child.pid
    leaders.add(child)
    // The members that outlive their leader: killed now, while they keep the group's id theirs.
    child.once('exit', () => {
      leaders.delete(child)
      try { process.kill(-pid, 'SIGKILL') } catch {}
    })
  }
  return child
}) as typeof spawn
