/**
 * @module rules/path
 * One spelling per path, applied to request paths and to path patterns alike. Where origins
 * disagree on whether two spellings are one route, the spellings are made one here: matching
 * errs towards counting a request, never towards letting it past a rule.
 */
import { BadRequestError } from '../errors'

/**
 * Paths no step below would change: segments of letters, digits and sub-delimiters, without
 * `%`, `;`, `.`, an empty segment or a trailing `/`. Most request paths are like this.
 */
const PLAIN = /^(?:\/[\w~!$&'()*+,:=@-]+)+$/

/** How many rounds of percent-decoding a path may need before it is refused. */
const MAX_DECODE_ROUNDS = 4

const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const ESCAPE = /%([0-9A-Fa-f]{2})/g
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const CONTROL = /[\x00-\x1f\x7f]/

/**
 * The path rules match against and key on, so that spellings an origin may treat as the same
 * path cannot slip past a rule:
 *
 * - escapes are decoded until the path stops changing (at most {@link MAX_DECODE_ROUNDS} rounds,
 *   so `%2561` is `%61` is `a`): unreserved characters, `%`, `;`, and `/` or `\` (`%2F`, `%5C`)
 *   as `/`; other escapes are upper-cased (`%c3%a9` is `%C3%A9`);
 * - `;` path parameters are cut from every segment (`/login;jsessionid=1` is `/login`);
 * - `.` and `..` segments are resolved, also when they were encoded or carried parameters;
 * - trailing dots and spaces of a segment are dropped (`/login.`, `/login%20` are `/login`);
 * - empty segments go: runs of `/` collapse and there is no trailing `/` (the root is `/`).
 *
 * Case is kept: rules fold it (see `match.caseSensitive`). Pure; `normalizePath(normalizePath(p))`
 * is `normalizePath(p)`.
 *
 * @param pathname - a `URL.pathname`
 * @throws {BadRequestError} for a control character or NUL (`%00`-`%1F`, `%7F`), raw or encoded
 *   at any depth, or a path still encoded after {@link MAX_DECODE_ROUNDS} rounds
 * @example normalizePath('/API;x/%2561b/') // '/API/ab'
 */
export function normalizePath(pathname: string): string {
  if (PLAIN.test(pathname) || pathname === '/') return pathname
  if (CONTROL.test(pathname)) throw refused('a control character')
  let path = pathname
  for (let round = 0; ; round++) {
    const decoded = path.replace(ESCAPE, decodeEscape)
    if (decoded === path) break
    if (round === MAX_DECODE_ROUNDS) throw refused('percent-encoding nested too deep')
    path = decoded
  }
  const segments: string[] = []
  for (const raw of path.split('/')) {
    const semicolon = raw.indexOf(';')
    const segment = semicolon === -1 ? raw : raw.slice(0, semicolon)
    const trimmed = trimEnd(segment)
    if (trimmed !== '') segments.push(trimmed)
    else if (segment.startsWith('..')) segments.pop()
  }
  return `/${segments.join('/')}`
}

/**
 * A normalised path without the format suffix of its last segment: `/login.json` is `/login`,
 * `/a/report.tar.gz` is `/a/report`. A leading dot is not a suffix (`/.env` stays).
 *
 * @param path - a path from {@link normalizePath}
 */
export function routeOf(path: string): string {
  const dot = path.indexOf('.', path.lastIndexOf('/') + 2)
  return dot === -1 ? path : path.slice(0, dot)
}

/**
 * A path pattern spelled the way request paths are: through `URL` (which percent-encodes
 * non-ASCII, resolves dot segments and leaves `*` alone) and then {@link normalizePath}. Without
 * this, a rule for `/café/*` would never see the request `/café/x`, which arrives as
 * `/caf%C3%A9/x`.
 *
 * @param pattern - a path pattern from a rule, starting with `/`, without `?` or `#`
 * @throws {BadRequestError} when the pattern holds a control character (the schema checks this)
 */
export function patternPath(pattern: string): string {
  // A leading "//" would make URL read the next segment as a host name.
  return normalizePath(new URL(pattern.replace(/^\/+/, '/'), 'http://pattern.invalid').pathname)
}

function decodeEscape(escape: string, hex: string): string {
  const code = parseInt(hex, 16)
  if (code < 0x20 || code === 0x7f) throw refused('an encoded control character or NUL')
  if (code === 0x2f || code === 0x5c) return '/'
  const char = String.fromCharCode(code)
  return char === '%' || char === ';' || UNRESERVED.test(char) ? char : escape.toUpperCase()
}

/** The segment without trailing dots and `%20`, by hand: a regex `(\.|%20)+$` backtracks. */
function trimEnd(segment: string): string {
  let end = segment.length
  for (;;) {
    if (segment[end - 1] === '.') end -= 1
    else if (end >= 3 && segment.endsWith('%20', end)) end -= 3
    else return segment.slice(0, end)
  }
}

function refused(what: string): BadRequestError {
  return new BadRequestError('path', `The request path holds ${what}; it is refused.`)
}
