/**
 * @module http/request/strip-headers
 * Removing headers before the origin under every spelling it could read them by.
 */
import { headerSpellings } from '../../rules'

/**
 * The request without any of these headers under any spelling common servers read as theirs
 * (case, `-`/`_` and the other characters CGI folds, see `foldHeaderName`): an origin behind
 * PHP or WSGI reads `X_RateLimit_Degraded` as `X-RateLimit-Degraded`. A request that carries
 * none is returned as it is.
 *
 * @param request - the incoming request (its headers are read as they arrived)
 * @param names - the headers to remove
 */
export function withoutHeaders(request: Request, names: readonly string[]): Request {
  const spellings = names.flatMap((name) => headerSpellings(request.headers, name))
  if (spellings.length === 0) return request
  const stripped = new Request(request)
  for (const spelling of spellings) stripped.headers.delete(spelling)
  return stripped
}
