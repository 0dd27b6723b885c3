// npm test's runner: tap, with one throwaway PostgreSQL for the whole run, whose URL every test
// file finds in PG_TEST_URL (test/helpers/postgres.ts): each makes its own databases there and
// drops them when it ends, instead of starting a server of its own (a second of a core each, and
// seconds of the disk's). A test that stops, kills or pauses its server still starts its own.
// A PG_TEST_URL already set is the user's server: tap runs with it alone. Every process of the run
// preloads test/helpers/tap-tracking.ts, which keeps tap's file tracking off node_modules, and on
// Node 22 test/helpers/strip-cache.mjs before it, which keeps our modules stripped of their types.
//   node scripts/with-postgres.ts <command> [args…]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { startEmbeddedPostgres, THROWAWAY } from '../test/helpers/embedded-postgres.ts'

const [command, ...args] = process.argv.slice(2)
const server = process.env.PG_TEST_URL === undefined ? await startEmbeddedPostgres({ settings: THROWAWAY }) : undefined
const preload = (helper: string): string => JSON.stringify(`--import=${fileURLToPath(new URL(`../test/helpers/${helper}`, import.meta.url))}`)
const preloads = [...(process.versions.node.startsWith('22.') ? [preload('strip-cache.mjs')] : []), preload('tap-tracking.ts')]
const env = { ...process.env, NODE_OPTIONS: `${preloads.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`, ...(server !== undefined && { PG_TEST_URL: server.url }) }
const child = spawn(command, args, { stdio: 'inherit', env })
// A signal for the run is the runner's too; the server goes once it has ended.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal))
const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (...ended) => resolve(ended)))
await server?.destroy()
process.exitCode = code ?? (signal === null ? 1 : 128)
