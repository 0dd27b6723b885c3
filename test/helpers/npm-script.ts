import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** What an npm script runs: the variables it sets for Node, and Node's arguments. */
export interface NodeCommand { env: Record<string, string>, args: string[] }

/**
 * What an npm script of the package at `dir` ("… && [NAME=value …] node <flags> <file> …") gives
 * Node: the variables set before it, then its flags, the file, made absolute, and the rest. The
 * tests and the bench run it so, without npm.
 */
export function nodeCommandOf (dir: string, script: string): NodeCommand {
  const command: string = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts[script]
  const words = command.split('&& ').at(-1)!.split(' ')
  const node = words.indexOf('node')
  const args = words.slice(node + 1)
  const file = args.findIndex((arg) => !arg.startsWith('-'))
  return {
    env: Object.fromEntries(words.slice(0, node).map((assignment) => assignment.split('=', 2))),
    args: args.map((arg, i) => i === file ? join(dir, arg) : arg)
  }
}
