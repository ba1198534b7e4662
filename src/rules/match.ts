/**
 * @module rules/match
 * Which rules apply to a request.
 */
import type { RequestFacts } from '../types'
import { fieldValue } from './fields'
import { compileGlob, type Glob } from './glob'
import type { Matcher } from './types'
import { patternPath, routeOf } from './path'

/** The spellings of a request path that path patterns are tried against. */
export interface PathView {
  /** The normalised path, and it without its last segment's format suffix. */
  exact: { path: string; route: string }
  /** The same, lower-cased, for rules that match without case. */
  folded: { path: string; route: string }
}

/**
 * The spellings of a normalised path that patterns are tried against: as it is and
 * lower-cased, each with and without the format suffix of its last segment. Computed once per
 * request, for every rule.
 *
 * @param path - `RequestFacts.path`
 */
export function pathView(path: string): PathView {
  const route = routeOf(path)
  return {
    exact: { path, route },
    folded: { path: path.toLowerCase(), route: route.toLowerCase() },
  }
}

/**
 * Compiles a `match.path` pattern. It matches a path, or that path without its format suffix
 * (see {@link routeOf}), so `/login` also counts `/login.json`. A pattern ending in `/*` also
 * matches the path before the slash (`/api/*` matches `/api`), since a trailing slash makes no
 * other path.
 *
 * @param pattern - the pattern as written
 * @param caseSensitive - `false` to fold case (the request path is folded to match)
 */
export function compilePathPattern(pattern: string, caseSensitive: boolean): Glob {
  const spelled = patternPath(pattern)
  const normal = caseSensitive ? spelled : spelled.toLowerCase()
  const glob = compileGlob(normal)
  if (!normal.endsWith('/*') || normal === '/*') return glob
  const bare = normal.slice(0, -2)
  return (text) => text === bare || glob(text)
}

/**
 * Whether a compiled `match` holds for a request. A rule without `match` matches everything.
 *
 * @param matcher - the rule's compiled matcher
 * @param facts - the request
 * @param view - the request path's spellings ({@link pathView})
 * @throws {BadRequestError} when a listed header or query parameter is ambiguous in the request
 *   (read as the key reads it, see `fieldValue`)
 */
export function matches(matcher: Matcher, facts: RequestFacts, view: PathView): boolean {
  if (matcher.methods && !methodMatches(matcher.methods, facts)) return false
  if (matcher.paths) {
    const { path, route } = matcher.caseSensitive ? view.exact : view.folded
    if (!anyGlob(matcher.paths, path, route)) return false
  }
  if (matcher.hosts && !anyGlob(matcher.hosts, facts.host, facts.host)) return false
  if (matcher.fields) {
    for (const { field, values } of matcher.fields) {
      const value = fieldValue(field, facts)
      if (value === undefined || !values.has(value)) return false
    }
  }
  return true
}

/**
 * Whether any glob matches `text` or `alternative`. A loop, not `some` with a closure: every rule
 * of every request asks, and each closure would be garbage.
 */
function anyGlob(globs: readonly Glob[], text: string, alternative: string): boolean {
  for (let i = 0; i < globs.length; i++) {
    const glob = globs[i]!
    if (glob(text) || (alternative !== text && glob(alternative))) return true
  }
  return false
}

/**
 * A method condition holds for the request's own method, and for the method an override
 * header names (the origin may act on either: erring towards counting).
 */
function methodMatches(methods: ReadonlySet<string>, facts: RequestFacts): boolean {
  if (methods.has(facts.method)) return true
  return facts.methodOverride !== undefined && methods.has(facts.methodOverride)
}
