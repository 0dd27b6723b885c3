// A variable set in the environment that the service does not read, but that looks like one it
// does (DATABSE_URL, STORE_TIMEOUT, port), is a typo until shown otherwise: its default would be
// used in silence. Close enough: the same name in another case, one missing its last part (a unit
// such as _MS), or an edit or two away (one for short names, where two would take PATH for PORT)
// with its first or its last letter right.

/** The declared name `name` was probably meant to be, or undefined when it looks like none. */
export function likelyMeant (name: string, declared: readonly string[]): string | undefined {
  const upper = name.toUpperCase()
  let best: { name: string, distance: number } | undefined
  for (const candidate of declared) {
    const limit = candidate.length >= 8 ? 2 : 1
    // Measured only where a typo can be: lengths within the limit, and the first or the last letter
    // kept (most of an environment is neither, and a start reads it all).
    const near = Math.abs(candidate.length - upper.length) <= limit && (candidate[0] === upper[0] || candidate.at(-1) === upper.at(-1))
    const distance = candidate.startsWith(`${upper}_`) ? 1 : near ? editDistance(upper, candidate) : Infinity
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance }
  }
  return best?.name
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: optimal string alignment, three rows at a time. */
function editDistance (a: string, b: string): number {
  let before = new Uint8Array(b.length + 1)
  let previous = Uint8Array.from({ length: b.length + 1 }, (_, j) => j)
  let row = new Uint8Array(b.length + 1)
  for (let i = 1; i <= a.length; i++) {
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j], before[j - 2] + 1)
    }
    ;[before, previous, row] = [previous, row, before]
  }
  return previous[b.length]
}
