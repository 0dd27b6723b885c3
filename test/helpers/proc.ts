import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

// What Linux's /proc says of a process: for the tests that kill a process tree, and for the
// bench that reads a server's CPU time.

/**
 * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses):
 * [0] the state, [1] the parent's pid, [11] and [12] user and system clock ticks. Undefined once
 * the process is gone.
 */
export function statFields (pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** True until the process has exited: a zombie, waiting to be reaped, has. */
export const running = (pid: number): boolean => !['Z', undefined].includes(statFields(pid)?.[0])

/** The processes `pid` has forked and that still exist: a postmaster's backends. */
export function childrenOf (pid: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((child) => statFields(child)?.[1] === String(pid))
}

/** "pid state wchan command" of each process still there: where a stuck one waits, for a failure message. */
export function describeProcesses (pids: number[]): string {
  const read = (pid: number, file: string): string => {
    try { return readFileSync(`/proc/${pid}/${file}`, 'utf8').replaceAll('\0', ' ').trim() } catch { return '?' }
  }
  return pids.filter((pid) => statFields(pid) !== undefined)
    .map((pid) => `${pid} ${statFields(pid)?.[0]} ${read(pid, 'wchan')} ${read(pid, 'cmdline')}`).join('\n') || '(none left)'
}

/** Polls until `done()`, or fails after `ms` with the message `failure()` gives then. */
export async function waitUntil (done: () => boolean, ms: number, failure: () => string): Promise<void> {
  for (const deadline = Date.now() + ms; !done(); await sleep(5)) {
    if (Date.now() > deadline) throw new Error(failure())
  }
}

/** Polls until `done()`, or fails after `ms` saying what was awaited and where `pids` wait. */
export async function waitFor (done: () => boolean, ms: number, what: string, pids: () => number[]): Promise<void> {
  await waitUntil(done, ms, () => `${what}: not after ${ms} ms. Processes:\n${describeProcesses(pids())}`)
}
