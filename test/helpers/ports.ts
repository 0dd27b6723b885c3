import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'

// Ports on 127.0.0.1 for the servers the tests and the bench start, and for an upstream that is
// not there: free now, and below the kernel's range for ports it picks (Linux's
// ip_local_port_range, 32768–60999 by default), from which every listen(0) and every
// connection's own end is taken. A port of that range, free now, can be handed to the next
// listen(0) of any test running beside, before the server meant for it starts (EADDRINUSE); or,
// meant to refuse every connection, to a server of another test that never answers, and the
// refusal becomes a wait.

// Where the kernel's range begins (Linux's default where it cannot be read).
function ephemeralLow (): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
}

/** A port nothing listens on now, for a server to start on it, or for a connection to be refused. */
export async function freePort (): Promise<number> {
  const low = ephemeralLow()
  for (let attempt = 0; attempt < 20; attempt++) {
    // A range that leaves no room below it: a port of the kernel's own choosing, as before.
    const port = low > 2048 ? randomInt(Math.max(1024, low - 12_000), low) : 0
    const server = createServer()
    const bound = await new Promise<number | undefined>((resolve) => server.once('error', () => resolve(undefined)).listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))
    if (bound !== undefined) {
      await new Promise((resolve) => server.close(resolve))
      return bound
    }
  }
  throw new Error(`no free port below ${low} in 20 tries`)
}
