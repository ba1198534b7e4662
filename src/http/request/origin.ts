/**
 * @module http/request/origin
 * Sends an allowed request on to the origin and hands back its response untouched.
 */
import { demoOrigin } from './demo-origin'
import { MAY_NAME_METHOD, METHOD_OVERRIDE_HEADERS, METHOD_OVERRIDE_PARAM } from './facts'
import { urlOf } from './url'
import { withoutHeaders } from './strip-headers'
import { HttpError } from '../../errors'
import { logEvent } from '../../log'

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Forwards a request.
 *
 * - `origin` empty: to the zone's origin (the Worker runs on a route; `fetch(request)` goes to
 *   the host the zone's DNS points at).
 * - `origin` a base URL: to that URL plus the request's path and query.
 * - `origin` `"demo"`: to the bundled demo origin, in-process.
 *
 * Method, headers and the streamed body go as they are; redirects are handed back to the
 * client, not followed. A failure to reach the origin is a 502 problem, never a 500.
 *
 * @param request - the incoming request
 * @param origin - the `ORIGIN` setting
 * @throws {HttpError} the 502, when the origin cannot be reached or `ORIGIN` is unusable
 */
export async function forwardToOrigin(request: Request, origin: string): Promise<Response> {
  if (origin === 'demo') return demoOrigin(request)
  let target: Request
  if (origin === '') {
    // With no zone origin behind it (wrangler dev, workers.dev) this would call the Worker itself.
    if (LOOPBACK_HOSTS.has(urlOf(request).hostname)) {
      throw badGateway(
        'ORIGIN is not set, and a local request has no zone origin behind it. Run `npm run dev` for the demo origin, or pass --var ORIGIN:<url>.'
      )
    }
    target = request
  } else {
    const base = parseOrigin(origin)
    if (!base) throw badGateway(`ORIGIN ${JSON.stringify(origin)} is not an http(s) URL.`)
    const url = urlOf(request)
    target = new Request(`${base}${url.pathname}${url.search}`, request)
  }
  try {
    return await fetch(target, { redirect: 'manual' })
  } catch (error) {
    logEvent('error', 'origin-unreachable', { error: String(error) })
    throw badGateway('The origin could not be reached.')
  }
}

/**
 * The request without method-override headers and `_method` query parameters
 * (`METHOD_OVERRIDE=strip`), so the origin acts on the method that was counted. Other query
 * parameters keep their exact spelling. A request without any is returned as it is.
 *
 * @param request - the incoming request
 */
export function withoutMethodOverride(request: Request): Request {
  const stripped = withoutHeaders(request, METHOD_OVERRIDE_HEADERS)
  const url = new URL(request.url)
  const params = url.search.slice(1).split('&')
  const kept = MAY_NAME_METHOD.test(url.search)
    ? params.filter((param) => paramName(param) !== METHOD_OVERRIDE_PARAM)
    : params
  if (kept.length === params.length) return stripped
  url.search = kept.join('&')
  return new Request(url, stripped)
}

/** A query parameter's name, decoded exactly as `URLSearchParams` (and so the counting) does. */
function paramName(param: string): string | undefined {
  return new URLSearchParams(param).keys().next().value
}

// The setting is the same on every request: parsed once per value.
let lastOrigin: { origin: string; base: string | undefined } | undefined

/** The origin URL without a trailing slash, so its path is a prefix of every forwarded path. */
function parseOrigin(origin: string): string | undefined {
  if (lastOrigin?.origin !== origin) lastOrigin = { origin, base: originBase(origin) }
  return lastOrigin.base
}

function originBase(origin: string): string | undefined {
  try {
    const url = new URL(origin)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
  } catch {
    return undefined
  }
}

function badGateway(detail: string): HttpError {
  return new HttpError(502, 'Bad Gateway', detail)
}
