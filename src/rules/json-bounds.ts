/**
 * @module rules/json-bounds
 * Depth and size bounds for parsed JSON, checked before anything walks it. Validators, the
 * Envoy config reader and `JSON.stringify` all recurse, so a document nested thousands of levels
 * deep would overflow the stack in them; this check walks with its own stack instead.
 */

/** How deep containers may nest and how many values a document may hold. */
export interface JsonBounds {
  /** Objects and arrays nest at most this many levels (the top level is the first). */
  maxDepth: number
  /** The most values (containers, their members and elements) in all. */
  maxValues: number
}

/** The bounds of a rules document, and of the bodies of `/json` and `POST /explain`. */
export const JSON_BOUNDS: JsonBounds = { maxDepth: 32, maxValues: 100_000 }

interface Frame {
  value: unknown
  depth: number
  parent: Frame | undefined
  key: string | number | undefined
}

/**
 * Where a parsed JSON value first goes past the bounds, as a problem that starts with the path
 * of the offending value (`rules[0].jwt.publicKey.k.k…: nested deeper than 32 levels`).
 * Iterative: it cannot overflow the stack itself, whatever the input.
 *
 * @param input - the parsed JSON
 * @param bounds - the limits to apply
 * @param root - how the top level is named in the path when it is the culprit
 * @returns the problem, or `undefined` if the value is within the bounds
 */
export function jsonBoundsProblem(
  input: unknown,
  bounds: JsonBounds = JSON_BOUNDS,
  root = '(document)'
): string | undefined {
  const stack: Frame[] = [{ value: input, depth: 1, parent: undefined, key: undefined }]
  let values = 1
  while (stack.length > 0) {
    const frame = stack.pop()!
    const { value, depth } = frame
    if (typeof value !== 'object' || value === null) continue
    if (depth > bounds.maxDepth)
      return `${pathOf(frame, root)}: nested deeper than ${bounds.maxDepth} levels`
    // An array's length is checked before its keys are listed: it may be huge.
    values += Array.isArray(value) ? value.length : 0
    const keys: (string | number)[] =
      values > bounds.maxValues ? [] : Array.isArray(value) ? [...value.keys()] : Object.keys(value)
    values += Array.isArray(value) ? 0 : keys.length
    if (values > bounds.maxValues)
      return `${pathOf(frame, root)}: more than ${bounds.maxValues} values in all`
    for (const key of keys.reverse())
      stack.push({
        value: (value as Record<string, unknown>)[key],
        depth: depth + 1,
        parent: frame,
        key,
      })
  }
  return undefined
}

/** `rules[0].match.path`-style path of a frame, keys cut short so the message stays short. */
function pathOf(frame: Frame, root: string): string {
  const parts: string[] = []
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) {
    const key = at.key
    parts.push(
      typeof key === 'number' ? `[${key}]` : `.${key.length > 40 ? `${key.slice(0, 37)}...` : key}`
    )
  }
  const path = parts.reverse().join('').replace(/^\./, '')
  return path === '' ? root : path
}
