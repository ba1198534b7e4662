/**
 * @module http/admin/path
 * Spellings of the admin prefix that an origin, a proxy or a path normaliser could read as the
 * prefix itself. They are answered by the limiter, never forwarded: a request meant for the
 * admin API (and its token) must not reach the origin because of a typo or a trick.
 */
import { BadRequestError } from '../../errors'
import { normalizePath } from '../../rules'

/**
 * Whether a path not under `prefix` as written still spells it: in the normal form rules match
 * (escapes decoded until stable, `;` parameters cut, dot segments resolved, trailing dots and
 * spaces dropped, repeated slashes collapsed), lower-cased, its first segments are the
 * prefix's. `/__RATELIMIT/rules`, `/__ratelimit;x/rules`, `/__ratelimit./rules`,
 * `//__ratelimit` and `/%255F_ratelimit` all do. A path with a control character
 * (`/__ratelimit%09/rules`) is not a spelling of anything: the rate limiter refuses it with 400.
 *
 * @param path - the request's path as sent (not decoded)
 * @param prefix - the `ADMIN_PREFIX` setting (`/__ratelimit`)
 * @param normalize - how the path is normalised (the request's own, worked out once)
 */
export function spellsPrefix(
  path: string,
  prefix: string,
  normalize: (path: string) => string = normalizePath
): boolean {
  let normal: string
  try {
    normal = normalize(path).toLowerCase()
  } catch (error) {
    // Not answered here: the rate limiter refuses that path with its 400 further on.
    if (error instanceof BadRequestError) return false
    throw error
  }
  const wanted = prefix.toLowerCase().replace(/\/+$/, '')
  return normal === wanted || normal.startsWith(`${wanted}/`)
}
