import { spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, closeSync, constants, createReadStream, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { killGroup, spawnGroup } from './children.ts'
import { logExcerpt } from './log-file.ts'
import { waitFor } from './proc.ts'

// LazyFS: a FUSE file system that keeps every write that was not fsynced in a cache of its own
// and drops that cache on command, exactly as a power cut drops what never reached the disk.
//   LAZYFS_BIN  a built lazyfs binary (libpcache.so.0 beside it), or
//   LAZYFS_SRC  LazyFS's source folder with its build.sh, built here once (as root, build.sh
//               installs what it needs from Debian's packages; about 40 s).
// .ci/run sets LAZYFS_SRC. Without either, the power-loss tests skip, saying so loudly.

const BUILD_DIR = join(tmpdir(), 'plant-store-lazyfs')
const MOUNT_TIMEOUT_MS = 15_000
// A cut takes milliseconds; one that has not finished by then never will.
const CUT_TIMEOUT_MS = 60_000

/** The lazyfs binary, built if need be; undefined (and the file skipped) when none is configured. */
export function findLazyFs (): string | undefined {
  const { LAZYFS_BIN: bin, LAZYFS_SRC: src } = process.env
  if (bin !== undefined && bin !== '') return resolve(bin)
  if (src === undefined || src === '') {
    console.error('\n!!! SKIPPING the power-loss tests: no LazyFS. Set LAZYFS_SRC to its source folder (with build.sh),\n!!! or LAZYFS_BIN to a built lazyfs binary; they need FUSE (/dev/fuse). See the README\'s Tests section.\n')
    t.plan(0, 'no LazyFS configured (LAZYFS_SRC or LAZYFS_BIN)')
    return undefined
  }
  const built = spawnSync('bash', [join(resolve(src), 'build.sh'), BUILD_DIR], { encoding: 'utf8' })
  if (built.status !== 0) throw new Error(`building LazyFS from ${src} failed: ${logExcerpt('lazyfs-build', built.stderr + built.stdout)}`)
  return built.stdout.trim().split('\n').at(-1)!
}

export interface Mount {
  /** Where to put the files whose power is to be cut. */
  dir: string
  /** Drops every write not fsynced, as a power cut would; resolves once LazyFS has done it. */
  cut: () => Promise<void>
}

/**
 * Mounts a fresh LazyFS, unmounted when the test ends, whatever happened. With `shared`, other
 * users may use it too (allow_other; LazyFS runs as us, so only root may share, and files it
 * creates are ours underneath, whoever asked).
 */
export async function mountLazyFs (t: Test, bin: string, { shared = false } = {}): Promise<Mount> {
  // No "-o" anywhere in the config's path: LazyFS would take it for an option and ignore the path.
  const base = mkdtempSync(join(tmpdir(), 'plant-store-power.'))
  const root = join(base, 'root') // where the synced bytes really are
  const dir = join(base, 'mnt')
  const fifo = join(base, 'faults.fifo')
  const done = join(base, 'done.fifo')
  const config = join(base, 'lazyfs.toml')
  mkdirSync(root)
  mkdirSync(dir)
  if (shared) chmodSync(base, 0o755)
  writeFileSync(config, `[faults]\nfifo_path="${fifo}"\nfifo_path_completed="${done}"\n[cache]\napply_eviction=false\n[cache.simple]\ncustom_size="1gb"\nblocks_per_page=1\n[filesystem]\nlog_all_operations=false\nlogfile="${join(base, 'lazyfs.log')}"\n`)

  // One -o: LazyFS passes on only its first ten arguments.
  const options = ['modules=subdir', `subdir=${root}`, ...(shared ? ['allow_other'] : [])]
  const args = [dir, '--config-path', config, '-o', options.join(','), '-f']
  const child: ChildProcess = spawnGroup(bin, args, { env: { ...process.env, LD_LIBRARY_PATH: dirname(bin) }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.teardown(async () => {
    spawnSync('fusermount3', ['-u', '-z', dir])
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(5000)])
    if (child.exitCode === null) killGroup(child)
    rmSync(base, { recursive: true, force: true })
  })

  // Every wait on LazyFS is bounded, and says what LazyFS said if it died: a test must fail, not hang.
  const alive = (): boolean => child.exitCode === null && child.signalCode === null
  const gone = (): string => `LazyFS exited (${child.exitCode ?? child.signalCode}), its last words:\n${stderr.trimEnd().split('\n').slice(-20).join('\n')}`
  const lazyfsPid = (): number[] => alive() ? [child.pid!] : []

  const mounted = (): boolean => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((line) => line.split(' ')[4] === dir)
  // Its thread for commands holds `fifo` open from then on: a write to it never blocks nor fails.
  const listening = (): boolean => {
    try {
      return readdirSync(`/proc/${child.pid}/fd`).some((fd) => readlinkSync(`/proc/${child.pid}/fd/${fd}`) === fifo)
    } catch {
      return false // a descriptor closed while we looked: look again
    }
  }
  await waitFor(() => !alive() || (mounted() && listening()), MOUNT_TIMEOUT_MS, `LazyFS mounting ${dir}`, lazyfsPid)
  if (!alive()) throw new Error(gone())
  // LazyFS writes "finished::clear-cache" to `done` after each cut; it blocks until we read.
  const finished = createInterface({ input: createReadStream(done) })[Symbol.asyncIterator]()

  return {
    dir,
    cut: async () => {
      // Not writeFileSync: were LazyFS gone, opening its fifo would block this process for good.
      if (!alive()) throw new Error(gone())
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
      try { writeSync(fd, 'lazyfs::clear-cache\n') } finally { closeSync(fd) }
      let answer: string | undefined
      finished.next().then((line) => { answer = String(line.value) }, (err) => { answer = String(err) })
      await waitFor(() => answer !== undefined || !alive(), CUT_TIMEOUT_MS, 'LazyFS dropping what was not synced', lazyfsPid)
      if (answer === undefined) throw new Error(gone())
      if (answer !== 'finished::clear-cache') throw new Error(`LazyFS answered ${JSON.stringify(answer)} to a cut`)
    }
  }
}
