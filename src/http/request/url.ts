/**
 * @module http/request/url
 * A request's URL and normalised path, worked out once per request: the admin prefix check and
 * the request's facts both need them, and parsing and normalising are a request's largest
 * share of the limiter's own work after the Durable Object call.
 */
import { normalizePath } from '../../rules'

interface Parsed {
  url: URL
  /** The normalised path, or the error normalising it threw (a control character). */
  normal?: { path: string } | { error: unknown }
}

const parsed = new WeakMap<Request, Parsed>()

function parsedOf(request: Request): Parsed {
  let entry = parsed.get(request)
  if (!entry) parsed.set(request, (entry = { url: new URL(request.url) }))
  return entry
}

/**
 * The request's URL, parsed once.
 *
 * @param request - the incoming request
 */
export function urlOf(request: Request): URL {
  return parsedOf(request).url
}

/**
 * The request's path in the normal form rules match (`rules/path.ts`), worked out once.
 *
 * @param request - the incoming request
 * @throws {BadRequestError} when the path holds a control character, raw or encoded
 */
export function normalPathOf(request: Request): string {
  const entry = parsedOf(request)
  if (!entry.normal) {
    try {
      entry.normal = { path: normalizePath(entry.url.pathname) }
    } catch (error) {
      entry.normal = { error }
    }
  }
  if ('error' in entry.normal) throw entry.normal.error
  return entry.normal.path
}
