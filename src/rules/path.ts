/**
 * @module rules/path
 * One spelling per path, applied to request paths and to path patterns alike.
 */

const UNRESERVED = /^[A-Za-z0-9\-._~]$/

/**
 * The path rules match against and key on, so that spellings an origin may treat as the same
 * path cannot slip past a rule:
 *
 * - percent-encoded unreserved characters are decoded (`/%61pi` is `/api`);
 * - an encoded `/` or `\` (`%2F`, `%5C`) counts as `/`, since many servers decode before routing;
 * - other escapes are upper-cased (`%c3%a9` is `%C3%A9`);
 * - runs of `/` are collapsed.
 *
 * Dot segments and non-ASCII characters are handled before this, by `URL` (see {@link patternPath}).
 *
 * @param pathname - a `URL.pathname`
 */
export function normalizePath(pathname: string): string {
  const decoded = pathname.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const code = parseInt(hex, 16)
    if (code === 0x2f || code === 0x5c) return '/'
    const char = String.fromCharCode(code)
    return UNRESERVED.test(char) ? char : escape.toUpperCase()
  })
  return decoded.replace(/\/{2,}/g, '/')
}

/**
 * A path pattern spelled the way request paths are: through `URL` (which percent-encodes
 * non-ASCII, resolves dot segments and leaves `*` alone) and then {@link normalizePath}. Without
 * this, a rule for `/café/*` would never see the request `/café/x`, which arrives as
 * `/caf%C3%A9/x`.
 *
 * @param pattern - a path pattern from a rule, starting with `/`, without `?` or `#`
 */
export function patternPath(pattern: string): string {
  // A leading "//" would make URL read the next segment as a host name.
  return normalizePath(new URL(pattern.replace(/^\/+/, '/'), 'http://pattern.invalid').pathname)
}
