/**
 * @module rules/glob
 * `*` patterns for paths and hosts, matched in linear time.
 */

/** A compiled pattern: tests whole strings. */
export type Glob = (text: string) => boolean

/**
 * Compiles a pattern where `*` matches any run of characters (`/` and `.` included) and every
 * other character matches itself.
 *
 * Matching is greedy-free: the first piece must start the text, the last must end it, and each
 * piece between is found left to right with `indexOf`. Taking the earliest place for each piece
 * never loses a match when `*` is the only wildcard, so a request path cannot make matching
 * backtrack (a regular expression like `^/.*\/.*\/.*\.json$` can take seconds on a long path).
 *
 * @param pattern - the pattern, already normalised like the text it will test
 * @example compileGlob('/api/*')('/api/users/7') // true
 */
export function compileGlob(pattern: string): Glob {
  const pieces = pattern.split('*')
  if (pieces.length === 1) return (text) => text === pattern
  const first = pieces[0]!
  const last = pieces[pieces.length - 1]!
  const middle = pieces.slice(1, -1).filter((piece) => piece !== '')
  const minimum = first.length + last.length
  return (text) => {
    if (text.length < minimum || !text.startsWith(first) || !text.endsWith(last)) return false
    let from = first.length
    const end = text.length - last.length
    for (const piece of middle) {
      const at = text.indexOf(piece, from)
      if (at === -1 || at + piece.length > end) return false
      from = at + piece.length
    }
    return true
  }
}
