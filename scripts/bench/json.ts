// JSON body parsing: the ordinary body must cost what JSON.parse costs; only a body with an
// integer beyond 2^53 pays for the lossless parser.
import { parse as losslessParse } from 'lossless-json'
import secureJson from 'secure-json-parse'
import { exactNumber, parseJsonBody } from '../../src/http/json-body.ts'

const ROUNDS = 5
const ITERATIONS = 200_000

const bodies = {
  ordinary: '{"id":123456789,"name":"Boston fern","tag":"indoor"}',
  'beyond 2^53': '{"id":9007199254740993,"name":"Boston fern","tag":"indoor"}'
}

const parsers: Record<string, (text: string) => unknown> = {
  'JSON.parse': (text) => JSON.parse(text),
  'secure-json-parse (Fastify default)': (text) => secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
  'parseJsonBody (ours)': parseJsonBody,
  'lossless-json on every body': (text) => losslessParse(text, null, exactNumber)
}

function nsPerCall (parse: (text: string) => unknown, text: string): number {
  const best: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < ITERATIONS; i++) parse(text)
    best.push(Number(process.hrtime.bigint() - start) / ITERATIONS)
  }
  return Math.min(...best)
}

export function benchJsonParse (): string {
  const lines = ['| parser | ' + Object.keys(bodies).join(' | ') + ' |', '| --- |' + ' ---: |'.repeat(Object.keys(bodies).length)]
  for (const [name, parse] of Object.entries(parsers)) {
    lines.push(`| ${name} | ` + Object.values(bodies).map((text) => `${nsPerCall(parse, text).toFixed(0)} ns`).join(' | ') + ' |')
  }
  return `### JSON body parse cost per body\n\nBest of ${ROUNDS} rounds of ${ITERATIONS} parses.\n\n${lines.join('\n')}\n`
}
