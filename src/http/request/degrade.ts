/**
 * @module http/request/degrade
 * `action: "degrade"`: a request over the limit of degrading rules only is sent on to a lighter
 * answer instead of refused: another origin path, or the same one marked with a header.
 */
import type { Check } from '../../rules'
import type { RuleDecision } from '../shared/rule-decision'
import { withoutHeaders } from './strip-headers'

/** Names the rule a degraded request is over the limit of (on the request and its response). */
export const DEGRADED_HEADER = 'X-RateLimit-Degraded'

/** The path a request sent to `degradeTo` was made for. */
export const ORIGINAL_PATH_HEADER = 'X-RateLimit-Original-Path'

/**
 * The degradation that applies to a request: when every rule that refused it degrades, the
 * first of them (rule order); none when any refusing rule rejects.
 *
 * @param denied - the request's refusing decisions (not in shadow), at least one
 */
export function degradation(denied: readonly RuleDecision[]): Check | undefined {
  if (!denied.every(({ check }) => check.rule.degrade !== undefined)) return undefined
  return denied[0]?.check
}

/**
 * The request the origin gets instead: sent to the rule's `degradeTo` path (query kept, the
 * original path in {@link ORIGINAL_PATH_HEADER}), or to the same path, marked with
 * {@link DEGRADED_HEADER} either way.
 *
 * @param request - the incoming request (without client copies of these headers)
 * @param check - the degrading rule's check
 */
export function degradedRequest(request: Request, check: Check): Request {
  const degrade = check.rule.degrade
  const url = new URL(request.url)
  const original = url.pathname
  if (degrade && 'to' in degrade) url.pathname = degrade.to
  const degraded = new Request(url, request)
  degraded.headers.set(DEGRADED_HEADER, check.rule.id)
  if (degrade && 'to' in degrade) degraded.headers.set(ORIGINAL_PATH_HEADER, original)
  return degraded
}

/**
 * The request without client-sent copies of the degradation headers, under any spelling: the
 * origin must be able to trust them, so a client cannot ask for (or dodge) the lighter answer
 * by writing them. A request without any is returned as it is.
 *
 * @param request - the incoming request
 */
export function withoutDegradeHeaders(request: Request): Request {
  return withoutHeaders(request, [DEGRADED_HEADER, ORIGINAL_PATH_HEADER])
}
