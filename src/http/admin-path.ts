/**
 * @module http/admin-path
 * Spellings of the admin prefix that an origin, a proxy or a path normaliser could read as the
 * prefix itself. They are answered by the limiter, never forwarded: a request meant for the
 * admin API (and its token) must not reach the origin because of a typo or a trick.
 */

// Whitespace, control characters and (at the end) dots, which servers trim from a segment.
const LEADING_JUNK = /^[\s\x00-\x1f\x7f]+/
const TRAILING_JUNK = /[\s.\x00-\x1f\x7f]+$/
const ESCAPE = /%([0-9A-Fa-f]{2})/g

/**
 * Whether a path not under `prefix` as written still spells it: once percent-decoded
 * (repeatedly), read with `\` as `/`, empty and dot segments resolved, `;` parameters dropped,
 * lower-cased, and leading whitespace and control characters and trailing dots, whitespace and
 * control characters trimmed from each segment, its first segments equal the prefix's.
 * `/__RATELIMIT/rules`, `/__ratelimit;x/rules`, `/__ratelimit./rules`, `/__ratelimit%09/rules`,
 * `//__ratelimit` and `/%5F_ratelimit` all do.
 *
 * @param path - the request's path as sent (not decoded)
 * @param prefix - the `ADMIN_PREFIX` setting (`/__ratelimit`)
 */
export function spellsPrefix(path: string, prefix: string): boolean {
  const wanted = prefix.toLowerCase().split('/').filter(Boolean)
  const segments = resolvedSegments(decodeRepeatedly(path))
  return wanted.every((segment, i) => segments[i] === segment)
}

/** Decodes `%XX` escapes (bytes as Latin-1: the prefix is ASCII) until none are left. */
function decodeRepeatedly(path: string): string {
  let text = path
  for (let round = 0; round < 8 && text.includes('%'); round++) {
    const decoded = text.replace(ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    if (decoded === text) break
    text = decoded
  }
  return text
}

function resolvedSegments(path: string): string[] {
  const segments: string[] = []
  for (const raw of path.split(/[/\\]/)) {
    const segment = raw.split(';', 1)[0]!
    if (segment === '..') {
      segments.pop()
      continue
    }
    const cleaned = segment.toLowerCase().replace(LEADING_JUNK, '').replace(TRAILING_JUNK, '')
    if (cleaned !== '') segments.push(cleaned)
  }
  return segments
}
