// The JWT section of npm run bench: server CPU per create with a static key, with an identity
// provider's access token whose verification is remembered (warm), and with a new token every
// request (cold: every request checks a signature). The provider is the tests' own (discovery and
// a JWKS on loopback); tokens are RS256, the common default. The same service process serves all
// three, in each round; a service with JWT checks off serves the static key beside it.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_ENTRIES } from '../../src/security/token-cache.ts'
import { AUDIENCE, startProvider } from '../../test/helpers/identity-provider.ts'
import { nodeCommandOf } from '../../test/helpers/npm-script.ts'
import { coreBusy, CPUS, fmt, measureLoad, median, root, spread, startServer, stopServer, warmUp, type LoadSpec, type Measured, type Server } from './measure.ts'

// More distinct tokens than the verified-token cache holds, sent in turn: each has left it before
// it comes again, so every request is a cold one.
const COLD_TOKENS = 3 * MAX_ENTRIES

export interface JwtBenchOptions {
  dir: string
  token: string
  rounds: number
  seconds: number
  connections: number
  freshIds: () => number
}

export async function benchJwt ({ dir, token, rounds, seconds, connections, freshIds }: JwtBenchOptions): Promise<string> {
  const closers: Array<() => unknown> = []
  const provider = await startProvider({ teardown: (close) => { closers.push(close) } })
  try {
    const exp = Math.floor(Date.now() / 1000) + 3600
    const warm = await provider.mint({ claims: { exp } })
    const tokensFile = join(dir, 'jwt-tokens.txt')
    process.stderr.write(`jwt: minting ${fmt(COLD_TOKENS)} tokens\n`)
    const cold: string[] = []
    while (cold.length < COLD_TOKENS) cold.push(...await Promise.all(Array.from({ length: 1000 }, async () => await provider.mint({ claims: { exp } }))))
    mkdirSync(dir, { recursive: true })
    writeFileSync(tokensFile, cold.join('\n') + '\n')

    const start = nodeCommandOf(root, 'start')
    const service = async (name: string, env: Record<string, string>): Promise<Server> =>
      await startServer(name, start, { API_TOKENS: token, LOG_LEVEL: 'warn', DATABASE_URL: `sqlite:${join(dir, `jwt-${name.replace(/\W+/g, '-')}-${Date.now()}.db`)}`, ...env })
    const scenarios: Array<[string, 'off' | 'on', Partial<LoadSpec>]> = [
      ['static key, JWT checks off', 'off', { token }],
      ['static key', 'on', { token }],
      ['JWT, verification remembered (warm)', 'on', { token: warm }],
      ['JWT, a new token every request (cold)', 'on', { tokensFile }]
    ]
    const runs: Record<string, Measured[]> = {}
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        const server = await service(`JWT ${mode}`, mode === 'on' ? { JWT_ISSUER: provider.issuer, JWT_AUDIENCE: AUDIENCE } : {})
        try {
          const mine = scenarios.filter(([, m]) => m === mode)
          const load = (extra: Partial<LoadSpec>): LoadSpec => ({ url: server.url, connections, ...extra })
          process.stderr.write(`round ${round}/${rounds}: JWT ${mode}, warming up\n`)
          await warmUp(mine.map(([, , extra]) => load(extra)), freshIds)
          for (const [name, , extra] of mine) {
            process.stderr.write(`round ${round}/${rounds}: ${name}\n`)
            ;(runs[name] ??= []).push(await measureLoad(server, load(extra), seconds, freshIds))
          }
        } finally {
          await stopServer(server)
        }
      }
    }
    const cpu = (name: string) => median(runs[name].map((r) => r.cpuUsPerRequest))
    // Within a round the scenarios ran on one process back to back: each round's ratio, then the median.
    const ratio = (name: string, over: string) => {
      const ratios = runs[name].map((r, i) => r.cpuUsPerRequest / runs[over][i].cpuUsPerRequest)
      return spread(ratios)
    }
    return [
      '### JWT access tokens: server CPU per create',
      '',
      `The service as \`npm start\` runs it, at LOG_LEVEL=warn on core ${CPUS.server}, wrk (${connections} connections) on core(s) ${CPUS.load}, ${seconds} s per measurement, ${rounds} rounds. RS256 tokens from the tests' identity provider on loopback; "cold" cycles through ${fmt(COLD_TOKENS)} tokens, more than the ${fmt(MAX_ENTRIES)} the cache keeps, so each request checks a signature. The ratio is over the static key on the same process (JWT checks on), median of the rounds' ratios (range).`,
      '',
      '| scenario | creates/s | server CPU µs/create | ratio to the static key | p50 / p99 ms | server core busy |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...scenarios.map(([name]) => {
        const r = runs[name]
        return `| ${name} | ${fmt(median(r.map((x) => x.requests / x.seconds)))} | ${fmt(cpu(name), 1)} | ${ratio(name, 'static key')} | ${fmt(median(r.map((x) => x.p50Ms)), 2)} / ${fmt(median(r.map((x) => x.p99Ms)), 2)} | ${coreBusy(r)} |`
      }),
      ''
    ].join('\n')
  } finally {
    for (const close of closers) await close()
  }
}
