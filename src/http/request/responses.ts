/**
 * @module http/request/responses
 * The responses the limiter answers with itself, and the header merge for those it passes on.
 */
import { problemResponse, type LimiterUnavailableError } from '../../errors'
import type { Check } from '../../rules'
import type { RuleDecision } from '../shared/rule-decision'
import { retryAfterSeconds, type HeaderEntry } from './headers'
import type { MessageGate } from './message-limits'
import { relaySocket } from './websocket'
import { logEvent } from '../../log'

/**
 * The default 429: an RFC 9457 problem naming the rule that denied the request.
 *
 * @param denied - the refusing decisions
 * @param retryAfterMs - the longest wait among them
 * @param headers - the limiter's headers, set as the response is made (not copied onto it after)
 */
export function tooManyRequests(
  denied: RuleDecision[],
  retryAfterMs: number,
  headers: readonly HeaderEntry[] = []
): Response {
  const { rule } = denied.reduce((a, b) =>
    b.decision.retryAfterMs > a.decision.retryAfterMs ? b : a
  ).check
  const seconds = retryAfterSeconds(retryAfterMs)
  return problemResponse(
    {
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Too Many Requests',
      status: 429,
      detail: `Rate limit "${rule.id}" (${rule.summary}) exceeded. Retry in ${seconds} s.`,
      rule: rule.id,
      retry_after: seconds,
      'violated-policies': denied.map(({ check }) => check.rule.id),
    },
    Object.fromEntries(headers)
  )
}

/** The 403 of a client on the deny list. What matched is logged, not told to the client. */
export function forbidden(match: string): Response {
  logEvent('warn', 'deny-list', { match })
  return problemResponse({
    title: 'Forbidden',
    status: 403,
    detail: 'This client may not use this service.',
  })
}

/** The 503 of rules that fail closed and could not be decided. */
export function unavailable(failed: { check: Check; error: LimiterUnavailableError }[]): Response {
  const rules = failed.map(({ check }) => check.rule.id)
  const reasons = [...new Set(failed.map(({ error }) => error.reason))]
  logEvent('error', 'rate-limit-fail-closed', { rules, reasons })
  return problemResponse(
    {
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      title: 'Service Unavailable',
      status: 503,
      detail: `The rate limiter could not decide (${reasons.join(', ')}) and ${rules.map((id) => `"${id}"`).join(', ')} fail${rules.length === 1 ? 's' : ''} closed.`,
      rules,
    },
    { 'Retry-After': '1' }
  )
}

/** Structured-field lists: an origin's own items stay, ours are added after them. */
const LIST_FIELDS = new Set(['ratelimit', 'ratelimit-policy'])

/**
 * A response with headers added. Responses from `fetch()` have immutable headers, so it is
 * re-wrapped (the body still streams). The limiter's legacy `X-RateLimit-*` values replace an
 * origin's; its `RateLimit` and `RateLimit-Policy` items are appended to an origin's, so a client
 * sees both policies. A WebSocket upgrade cannot be re-wrapped and is left as it is.
 *
 * @param response - the response to add to
 * @param headers - the limiter's headers
 * @param drop - headers of the origin's meant for the limiter only (a `countOn` cost header)
 */
export function withHeaders(
  response: Response,
  headers: readonly HeaderEntry[],
  drop: readonly string[] = []
): Response {
  if (headers.length === 0 && drop.length === 0) return response
  if (response.status === 101 || response.webSocket) return response
  const copy = new Response(response.body, response)
  const copied = copy.headers
  for (const name of drop) copied.delete(name)
  for (const [name, value] of headers) {
    if (LIST_FIELDS.has(name.toLowerCase())) copied.append(name, value)
    else copied.set(name, value)
  }
  return copy
}

/** The 504 of a request that waited in a concurrency queue past the rule's `maxWait`. */
export function queueTimeout(waited: RuleDecision[]): Response {
  const rules = waited.map(({ check }) => check.rule.id)
  return problemResponse({
    title: 'Gateway Timeout',
    status: 504,
    detail: `The request waited for a free slot (${rules.map((id) => `"${id}"`).join(', ')}) longer than allowed.`,
    rules,
  })
}

/**
 * The response, with `release` run once its body has been fully sent, has failed, or was
 * cancelled; for a WebSocket upgrade, once the socket has closed or failed (the socket is then
 * relayed, see {@link relaySocket}); right away when there is neither.
 *
 * @param response - what goes back to the client
 * @param release - frees what the request held
 * @param keepAlive - keeps the release running past the response (`ctx.waitUntil`)
 * @param gate - a relayed socket's message limits, if any
 */
export function releaseWhenDone(
  response: Response,
  release: () => Promise<void>,
  keepAlive: (promise: Promise<unknown>) => void,
  gate?: MessageGate
): Response {
  if (response.webSocket) return relaySocket(response, () => keepAlive(release()), gate)
  if (!response.body || response.status === 101) {
    keepAlive(release())
    return response
  }
  const { readable, writable } = new TransformStream()
  keepAlive(
    response.body
      .pipeTo(writable)
      .catch(() => {})
      .then(release)
  )
  return new Response(readable, response)
}
