/**
 * @module http/request/cors
 * CORS for what the limiter answers itself (429, 403, 503, 400, 502, 504), so that a page on
 * another origin reads the status and `Retry-After` instead of an opaque network error; and the
 * rate-limit headers exposed on the origin's answers it passes on. The policy is `CORS_ORIGINS`
 * or `rateLimit({ cors })`, compiled once (`../shared/cors-policy.ts`):
 *
 * - `off` (the default): no CORS headers at all, as before.
 * - `*`: any origin, without credentials. A preflight the limiter answers itself is granted
 *   only for what needs no preflight (GET, HEAD, POST and the safelisted headers).
 * - a list of exact origins: those, without credentials.
 * - `mirror`: the `Access-Control-*` headers the origin sent on its last answer for the same
 *   path and `Origin`, kept per isolate (bounded, least recently used go first). Nothing is
 *   mirrored before the origin has answered once in that isolate; credentials only if the
 *   origin allowed them. Kept per host and path.
 *
 * Only the rate-limit middleware applies it ({@link withCors}), so the admin API and `/json`
 * never carry CORS headers.
 */
import type { Context } from 'hono'
import { HttpError } from '../../errors'
import type { CorsPolicy } from '../shared/cors-policy'
import { urlOf } from './url'

/** The rate-limit headers a page on another origin may read. */
export const EXPOSED_HEADERS: readonly string[] = [
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-RateLimit-Retry-After',
]

/** The answers mirrored per isolate, at most. */
export const MAX_MIRRORED = 1000

/** A path longer than this is not mirrored (it would make a large key). */
const MAX_MIRRORED_PATH = 1024

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The methods and request headers the Fetch standard lets a page send without a preflight. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST'])
const SAFE_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-language',
  'content-language',
  'content-type',
])
const isSafeHeader = (name: string) => SAFE_HEADERS.has(name.toLowerCase())

/**
 * Runs the rate limiter for one request and gives what leaves it the CORS headers the policy
 * calls for: the one place they are added.
 *
 * - The limiter's own answer (returned by `limit`, an `HttpError` thrown by it, or one thrown
 *   after it and answered by the app's error handler, such as the Worker's 502): for an allowed
 *   `Origin`, `Access-Control-Allow-Origin` and the rate-limit headers exposed. A preflight it
 *   answers itself becomes the 204 the origin would give, so the page goes on to send the real
 *   request, whose answer it can then read.
 * - The origin's answer: the rate-limit headers added to its `Access-Control-Expose-Headers`
 *   when the `Origin` is allowed; a preflight's answer is left alone. Under `mirror`, its
 *   `Access-Control-*` headers are remembered.
 *
 * `Vary: Origin` goes on every answer that depends on the `Origin`. An unexpected error (a bug)
 * is rethrown, so its 503 carries no CORS headers.
 *
 * @param c - the request's context
 * @param policy - not `off`
 * @param limit - the middleware's work: its answer, or nothing once the request was passed on
 */
export async function withCors(
  c: Context,
  policy: CorsPolicy,
  limit: () => Promise<Response | void>
): Promise<Response | void> {
  let answer: Response | void
  try {
    answer = await limit()
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    answer = error.getResponse()
  }
  const request = c.req.raw
  if (answer) return ownAnswer(policy, request, answer)
  const passed = c.res
  const response =
    c.error instanceof HttpError
      ? ownAnswer(policy, request, passed)
      : originAnswer(policy, request, passed)
  if (response === passed) return
  // Hono's setter would copy the old response's headers over ours; clearing it first prevents that.
  c.res = undefined
  c.res = response
}

function ownAnswer(policy: CorsPolicy, request: Request, response: Response): Response {
  const origin = request.headers.get('origin')
  const preflight = isPreflight(request)
  const granted = grant(policy, request, origin, preflight)
  const vary = policy.mode === 'any' ? [] : ['Origin']
  if (preflight && granted) {
    if (policy.mode !== 'mirror')
      vary.push('Access-Control-Request-Method', 'Access-Control-Request-Headers')
    return new Response(null, { status: 204, headers: [...granted, ['Vary', vary.join(', ')]] })
  }
  const copy = new Response(response.body, response)
  if (granted) {
    for (const [name, value] of granted) copy.headers.set(name, value)
    appendList(copy.headers, 'Access-Control-Expose-Headers', EXPOSED_HEADERS)
  }
  appendList(copy.headers, 'Vary', vary)
  return copy
}

/**
 * The CORS headers for the limiter's own answer, or `undefined` if the `Origin` is not allowed.
 * Under `*` an answer gets them even without an `Origin`, so it does not depend on one.
 */
function grant(
  policy: CorsPolicy,
  request: Request,
  origin: string | null,
  preflight: boolean
): [string, string][] | undefined {
  if (policy.mode === 'off') return undefined
  if (policy.mode === 'mirror')
    return origin === null ? undefined : recall(request, origin, preflight)
  if (policy.mode === 'list' && (origin === null || !policy.origins.has(origin))) return undefined
  const headers: [string, string][] = [
    ['Access-Control-Allow-Origin', origin === null || policy.mode === 'any' ? '*' : origin],
  ]
  if (!preflight) return headers
  const method = request.headers.get('access-control-request-method') ?? ''
  const asked = (request.headers.get('access-control-request-headers') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
  if (!TOKEN.test(method) || !asked.every((name) => TOKEN.test(name))) return undefined
  // Under `*` no origin has been vouched for: the limiter grants only what a page may send
  // cross-origin without asking, never a method or header the origin has not approved itself.
  if (policy.mode === 'any' && !(SAFE_METHODS.has(method) && asked.every(isSafeHeader)))
    return undefined
  headers.push(['Access-Control-Allow-Methods', method])
  if (asked.length > 0) headers.push(['Access-Control-Allow-Headers', asked.join(', ')])
  return headers
}

function originAnswer(policy: CorsPolicy, request: Request, response: Response): Response {
  // A WebSocket upgrade cannot be re-wrapped, and its headers mean nothing to CORS.
  if (response.status === 101 || response.webSocket) return response
  const origin = request.headers.get('origin')
  const preflight = isPreflight(request)
  if (policy.mode === 'mirror' && origin !== null)
    remember(request, origin, preflight, response.headers)
  if (preflight) return response
  let allowed: boolean
  if (policy.mode === 'any') allowed = true
  else if (origin === null) allowed = false
  else if (policy.mode === 'list') allowed = policy.origins.has(origin)
  else {
    const allowOrigin = response.headers.get('access-control-allow-origin')
    allowed = allowOrigin === '*' || allowOrigin === origin
  }
  // Under mirror the origin's own Vary covers what its CORS answer depends on.
  const vary = policy.mode === 'list'
  if (!allowed && !vary) return response
  const copy = new Response(response.body, response)
  if (allowed) appendList(copy.headers, 'Access-Control-Expose-Headers', EXPOSED_HEADERS)
  if (vary) appendList(copy.headers, 'Vary', ['Origin'])
  return copy
}

function isPreflight(request: Request): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.has('origin') &&
    request.headers.has('access-control-request-method')
  )
}

/** Adds names to a comma-separated header, keeping what is there, each name once. */
function appendList(headers: Headers, name: string, items: readonly string[]): void {
  const present = (headers.get(name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
  const seen = new Set(present.map((item) => item.toLowerCase()))
  if (seen.has('*') && name === 'Vary') return
  const added = items.filter((item) => !seen.has(item.toLowerCase()))
  if (added.length > 0) headers.set(name, [...present, ...added].join(', '))
}

/** The origin's last `Access-Control-*` headers by kind, `Origin` and path (LRU order). */
const mirrored = new Map<string, [string, string][]>()

function mirrorKey(request: Request, origin: string, preflight: boolean): string | undefined {
  // The host too: a route may serve several hosts, each with an origin (and CORS) of its own.
  const { host, pathname } = urlOf(request)
  const where = `${host}${pathname}`
  if (where.length > MAX_MIRRORED_PATH || origin.length > MAX_MIRRORED_PATH) return undefined
  return `${preflight ? 'preflight' : 'response'} ${origin} ${where}`
}

function remember(request: Request, origin: string, preflight: boolean, headers: Headers): void {
  const key = mirrorKey(request, origin, preflight)
  if (key === undefined) return
  const cors = [...headers.entries()].filter(([name]) => name.startsWith('access-control-'))
  mirrored.delete(key)
  // The origin's last answer is the one that counts: one without CORS headers withdraws them.
  if (cors.length === 0) return
  mirrored.set(key, cors)
  if (mirrored.size > MAX_MIRRORED) mirrored.delete(mirrored.keys().next().value!)
}

function recall(
  request: Request,
  origin: string,
  preflight: boolean
): [string, string][] | undefined {
  const key = mirrorKey(request, origin, preflight)
  const found = key === undefined ? undefined : mirrored.get(key)
  if (key === undefined || found === undefined) return undefined
  mirrored.delete(key)
  mirrored.set(key, found)
  return found
}
