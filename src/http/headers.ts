/**
 * @module http/headers
 * Decisions to HTTP headers: legacy `X-RateLimit-*` and the IETF draft-10 `RateLimit` /
 * `RateLimit-Policy` fields. Pure.
 */
import { serializeList, type BareItem, type Item } from 'structured-headers'
import { advertisedQuota, type Check } from '../rules'
import type { Decision } from '../types'
import type { HeaderMode } from './settings'

/**
 * One rule's decision for the current request: the plan's check as it was charged, and what
 * the key's Durable Object decided. The one record the headers, the 429 and 504 bodies, the
 * slot release and `c.get('rateLimit')` read.
 */
export interface RuleDecision {
  /** The key charged, under which rule, policy and cost. */
  check: Check
  /** What its Durable Object decided. */
  decision: Decision
}

/** A header name and value. */
export type HeaderEntry = readonly [name: string, value: string]

/**
 * The decision that legacy headers describe: the one with the fewest remaining units, and of
 * those the one that resets last, because that is the limit the client will meet first.
 *
 * @param decisions - at least one decision
 */
export function tightest(decisions: readonly RuleDecision[]): RuleDecision | undefined {
  let best: RuleDecision | undefined
  for (const item of decisions) {
    if (
      !best ||
      item.decision.remaining < best.decision.remaining ||
      (item.decision.remaining === best.decision.remaining &&
        item.decision.resetAtMs > best.decision.resetAtMs)
    ) {
      best = item
    }
  }
  return best
}

/**
 * Whole seconds until a request of the same cost may pass: `Retry-After` (RFC 9110) takes
 * whole seconds, and 0 would invite an immediate retry that is sure to fail.
 *
 * @param retryAfterMs - from the decision
 */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000))
}

/**
 * The rate-limit headers for a response.
 *
 * - Legacy: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (Unix seconds when
 *   the full quota is back) for the tightest rule.
 * - IETF draft-10: `RateLimit-Policy` (`"id";q=quota;w=window`) and `RateLimit`
 *   (`"id";r=remaining;t=seconds until reset`), one item per rule.
 *
 * @param decisions - the enforced decisions for the request
 * @param nowMs - the current time, for the relative `t`
 * @param mode - which families to emit
 */
export function rateLimitHeaders(
  decisions: readonly RuleDecision[],
  nowMs: number,
  mode: HeaderMode
): HeaderEntry[] {
  const headers: HeaderEntry[] = []
  const top = tightest(decisions)
  if (!top || mode === 'none') return headers
  if (mode === 'legacy' || mode === 'both') {
    headers.push(
      ['X-RateLimit-Limit', String(top.decision.limit)],
      ['X-RateLimit-Remaining', String(top.decision.remaining)],
      ['X-RateLimit-Reset', String(Math.ceil(top.decision.resetAtMs / 1000))]
    )
  }
  if (mode === 'ietf' || mode === 'both') {
    const policies = decisions.map(({ check: { rule, policy } }): Item => {
      // Draft-10's quota unit for a limit on requests in flight; it has no window.
      if (policy.algorithm === 'concurrency')
        return [
          rule.id,
          new Map<string, BareItem>([
            ['q', policy.limit],
            ['qu', 'concurrent-requests'],
          ]),
        ]
      const { quota, windowSeconds } = advertisedQuota(policy)
      return [
        rule.id,
        new Map([
          ['q', quota],
          ['w', windowSeconds],
        ]),
      ]
    })
    const limits = decisions.map(({ check, decision }): Item => {
      const t = Math.max(0, Math.ceil((decision.resetAtMs - nowMs) / 1000))
      return [
        check.rule.id,
        new Map([
          ['r', decision.remaining],
          ['t', t],
        ]),
      ]
    })
    headers.push(
      ['RateLimit-Policy', serializeList(policies)],
      ['RateLimit', serializeList(limits)]
    )
  }
  return headers
}

/**
 * The headers of a 429: `Retry-After` and `X-RateLimit-Retry-After`, both whole seconds.
 *
 * @param retryAfterMs - the longest wait among the denying rules
 */
export function retryHeaders(retryAfterMs: number): HeaderEntry[] {
  const seconds = String(retryAfterSeconds(retryAfterMs))
  return [
    ['Retry-After', seconds],
    ['X-RateLimit-Retry-After', seconds],
  ]
}
