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

/** A name as one token of a JSON pointer (RFC 6901): `a/b~c` is a~1b~0c. */
export const pointerToken = (token: string | number): string => String(token).replace(/~/g, '~0').replace(/\//g, '~1')

/** The JSON pointer of a path under the document's root: ['paths', '/pets', 'get'] is #/paths/~1pets/get. */
export function pointerOf (...tokens: Array<string | number>): string {
  return '#' + tokens.map((token) => '/' + pointerToken(token)).join('')
}
