/**
 * @module http/request/headers
 * Decisions to HTTP headers: legacy `X-RateLimit-*` and the `RateLimit` / `RateLimit-Policy`
 * fields of draft-ietf-httpapi-ratelimit-headers-11. Pure.
 */
import { serializeByteSequence, serializeItem, type BareItem } from 'structured-headers'
import { advertisedQuota, type Check } from '../../rules'
import type { RuleDecision } from '../shared/rule-decision'
import type { HeaderMode } from '../shared/settings'

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
 * - draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy` (`"id";q=quota;w=window`) and
 *   `RateLimit` (`"id";r=remaining;t=seconds until more than r is available`), one item per
 *   rule. At `r=0`, `t` is the rule's `Retry-After`. `RateLimit` items carry `pk`, the partition
 *   key (the key's values), where the rule shows its keys; `RateLimit-Policy` does not, so that
 *   it stays the same on every response, as the draft asks of it.
 *
 * @param decisions - the enforced decisions for the request
 * @param mode - which families to emit
 */
export function rateLimitHeaders(
  decisions: readonly RuleDecision[],
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
    const policies = decisions.map(({ check }) => policyItem(check))
    const limits = decisions.map(({ check, decision }) => limitItem(check, decision))
    headers.push(['RateLimit-Policy', policies.join(', ')], ['RateLimit', limits.join(', ')])
  }
  return headers
}

/**
 * A rule's `t`: whole seconds until more than `remaining` units are available, rounded as
 * `Retry-After` is; for a denial whose key's object did not say (a leased rule's, one the
 * isolate repeats), the wait it gave. `undefined` when no more will come, or it is not known.
 */
function secondsUntilMore(decision: RuleDecision['decision']): number | undefined {
  const ms = decision.moreInMs ?? (decision.allowed ? undefined : decision.retryAfterMs)
  return ms === undefined ? undefined : retryAfterSeconds(ms)
}

const ruleTokens = new Map<string, string>()
const utf8 = new TextEncoder()

/**
 * A rule's `RateLimit` list member, e.g. `"api";r=42;t=30;pk=:MjAzLjAuMTEzLjc=:`. The rule id
 * is serialised once; `r` and `t` are sf-integers, written as such (the library's own output
 * for them).
 */
function limitItem(check: Check, decision: RuleDecision['decision']): string {
  const remaining = decision.remaining
  const t = secondsUntilMore(decision)
  if (!isSfInteger(remaining) || (t !== undefined && !isSfInteger(t))) {
    const params = new Map<string, BareItem>([['r', remaining]])
    if (t !== undefined) params.set('t', t)
    return serializeItem([check.rule.id, params]) + partitionParam(check)
  }
  let token = ruleTokens.get(check.rule.id)
  if (token === undefined) {
    token = serializeItem(check.rule.id)
    // Rule ids are few; the bound only guards against an unbounded document.
    if (ruleTokens.size < 10_000) ruleTokens.set(check.rule.id, token)
  }
  return `${token};r=${remaining}${t === undefined ? '' : `;t=${t}`}${partitionParam(check)}`
}

/**
 * `;pk=:…:`, the partition key: the values the rule keys the request on (what follows the rule
 * id in the limit key, percent-encoded), as a Byte Sequence. Only for a rule that shows its keys
 * (`showKeys`, by default not for keys from headers, query parameters or claims, which may be
 * credentials), and keys on something.
 */
function partitionParam({ rule, key }: Check): string {
  if (!rule.showKeys || key.length <= rule.id.length + 1) return ''
  if (key === lastPartition.key) return lastPartition.param
  const values = key.slice(rule.id.length + 1)
  // Key values are percent-encoded, so printable ASCII: their UTF-8 is their Latin-1, which
  // `btoa` takes.
  const param = ASCII.test(values)
    ? `;pk=:${btoa(values)}:`
    : `;pk=${serializeByteSequence(utf8.encode(values))}`
  // The last key's, kept: a hot key's requests need it again, a key seen once leaves nothing.
  lastPartition = { key, param }
  return param
}

const ASCII = /^[ -~]*$/
let lastPartition = { key: '', param: '' }

/** RFC 8941 §3.3.1: an integer of at most 15 digits. */
function isSfInteger(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) <= 999_999_999_999_999
}

// A rule's policy item is the same on every response: serialised once per rule and policy.
const policyItems = new WeakMap<Check['policy'], Map<string, string>>()

/** A rule's `RateLimit-Policy` list member, e.g. `"api";q=100;w=60`. */
function policyItem({ rule, policy }: Check): string {
  let byRule = policyItems.get(policy)
  if (!byRule) policyItems.set(policy, (byRule = new Map()))
  let item = byRule.get(rule.id)
  if (item === undefined) {
    const params = new Map<string, BareItem>()
    if (policy.algorithm === 'concurrency') {
      // Draft-10's quota unit for a limit on requests in flight; it has no window.
      params.set('q', policy.limit).set('qu', 'concurrent-requests')
    } else {
      const { quota, windowSeconds } = advertisedQuota(policy)
      params.set('q', quota).set('w', windowSeconds)
    }
    byRule.set(rule.id, (item = serializeItem([rule.id, params])))
  }
  return item
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
