import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { accessSync, constants, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { killGroup, spawnGroup } from './children.ts'
import { running } from './proc.ts'

// The harness's process groups (children.ts): a group is killed while its leader holds its id,
// never after. Pids wrap at 32,768 here, so a group id a test keeps after its leader exited soon
// names another test's process: a stale teardown killed the power-loss test's service so.

const exited = (child: ChildProcess): Promise<void> => new Promise((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve()
  else child.once('exit', () => resolve())
})

// Linux hands out the pid after the one written here: as root, a test can make a pid come round again.
const NEXT_PID = '/proc/sys/kernel/ns_last_pid'
const canChoosePids = (() => {
  try {
    accessSync(NEXT_PID, constants.W_OK)
    return process.getuid?.() === 0
  } catch {
    return false
  }
})()

t.test('a group whose leader has exited is never signalled: its id may be another process\'s', { skip: canChoosePids ? false : 'needs root, to choose the next pid' }, async (t) => {
  let gone: ChildProcess | undefined
  let other: ChildProcess | undefined
  // The next process gets the exited leader's pid, as it would once pids wrapped. Another process
  // of the machine may fork first and keep that pid: then try again with another leader.
  for (let attempt = 0; attempt < 20 && (other === undefined || other.pid !== gone!.pid); attempt++) {
    other?.kill('SIGKILL')
    gone = spawnGroup('true', [], { stdio: 'ignore' })
    await exited(gone)
    writeFileSync(NEXT_PID, String(gone.pid! - 1))
    other = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' })
  }
  t.teardown(() => { other?.kill('SIGKILL') })
  t.equal(other!.pid, gone!.pid, 'another process group now has the id')
  killGroup(gone!)
  await sleep(200)
  t.ok(other!.exitCode === null && other!.signalCode === null, 'and lives on, though the teardown of the old one ran')
})

t.test('what a leader leaves behind is killed when it exits, while the id is still theirs', async (t) => {
  const leader = spawnGroup('sh', ['-c', 'sleep 30 >/dev/null & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] })
  let output = ''
  leader.stdout!.on('data', (chunk) => { output += chunk })
  // 'exit' may come before the output is read: wait for both.
  await Promise.all([exited(leader), once(leader.stdout!, 'end')])
  const member = Number(output.trim())
  t.ok(member > 0, `the leader left ${member} running`)
  for (let i = 0; i < 100 && running(member); i++) await sleep(20)
  t.notOk(running(member), 'killed with its group when the leader exited')
})

t.test('a live group is killed whole', async (t) => {
  const leader = spawnGroup('sh', ['-c', 'sleep 30 & sleep 30'], { stdio: 'ignore' })
  await sleep(100)
  killGroup(leader)
  await exited(leader)
  t.equal(leader.signalCode, 'SIGKILL')
})
