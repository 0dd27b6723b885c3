import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What an npm script of the package at `dir` ("… && node <flags> <file> …") gives Node: its flags,
 * then the file, made absolute, then the rest. The tests and the bench run it so, without npm.
 */
export function nodeArgsOf (dir: string, script: string): string[] {
  const command: string = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts[script]
  const args = command.split('&& node ')[1].split(' ')
  const file = args.findIndex((arg) => !arg.startsWith('-'))
  return args.map((arg, i) => i === file ? join(dir, arg) : arg)
}
