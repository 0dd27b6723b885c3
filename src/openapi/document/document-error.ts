// What a document that cannot be served gets: one message naming the file and the place in it (a
// JSON pointer), said at boot in one line with no stack trace (server.ts, the mock).

export class DocumentError extends Error {
  override name = 'DocumentError'
  /** The file, as the user named it. */
  readonly file: string
  /** A JSON pointer into it (`#/paths/~1pets/get`), or '' for the whole file. */
  readonly pointer: string

  /** `problem` says what is wrong, as a phrase following the place: "has no responses". */
  constructor (file: string, pointer: string, problem: string) {
    super(pointer === '' ? `${file} ${problem}` : `${file}${pointer}: ${problem}`)
    this.file = file
    this.pointer = pointer
  }
}

/** The JSON pointer of a path under the document's root: ['paths', '/pets', 'get'] is #/paths/~1pets/get. */
export function pointerOf (...tokens: Array<string | number>): string {
  return '#' + tokens.map((token) => '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1')).join('')
}
