import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

// Ports on 127.0.0.1 for the tests' own servers, and for an upstream that is not there.

/** A port free now, from the kernel's range, for a server a test starts on it next. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

// Where the kernel picks a port for a listen(0) or a connection's own end (Linux's default range
// where it cannot be read).
function ephemeralLow (): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
}

/**
 * A port nothing listens on, for an upstream that refuses every connection: one below the
 * kernel's range. A port of that range, closed, can be handed to the next listen(0) of any test
 * running beside (one whose server never answers, at times), and the refusal becomes a wait.
 */
export async function refusedPort (): Promise<number> {
  const low = ephemeralLow()
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = randomInt(Math.max(1025, low - 12_000), low)
    const server = createServer()
    const free = await new Promise<boolean>((resolve) => server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)))
    if (free) {
      await new Promise((resolve) => server.close(resolve))
      return port
    }
  }
  throw new Error(`no free port below ${low} in 20 tries`)
}
