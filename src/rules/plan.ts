/**
 * @module rules/plan
 * What the rules say to do with one request, before any counter is touched.
 */
import { BadRequestError } from '../errors'
import type { Policy } from '../algorithms'
import type { FailMode, RequestFacts } from '../types'
import { requestCost } from './cost'
import { limitKey } from './key'
import { matches, pathView } from './match'
import type { Rule, RuleSet } from './types'
import { tierPolicy } from './tiers'

/**
 * One key to charge. It is what the limiter client takes (`ChargeCall` in `limiter/client.ts`),
 * and, paired with its decision, what the headers, the 429 and the slot release read.
 */
export interface Check {
  /** The rule; its id names the key's Durable Object. */
  rule: Rule
  /** The policy to apply: the rule's, or its tier's. */
  policy: Policy
  /** The limit key (`rule|value|…`). */
  key: string
  /** Units to take. */
  cost: number
  /** Counted, but a denial only logs "would deny". */
  shadow: boolean
  /** What happens when no decision can be had: the rule's, but `open` in shadow (never blocks). */
  failMode: FailMode
  /** The rule's: asked of the key's object per request (absent: `exact`), or spent from a lease. */
  consistency?: 'exact' | 'leased'
  /** The rule counts responses (`countOn`): the key is only checked now, charged after. */
  deferred?: boolean
  /**
   * The rule's `maxInFlight` slot for this key, held until the response is charged: a
   * concurrency check on `<key>|#in-flight` (key values are percent-encoded and rule ids hold
   * no "#", so no request can name it). Not shown in headers: the rule's own check is.
   */
  inFlight?: boolean
}

/** A rule whose `match` holds for the request but that is not charged, and why. */
export interface Skipped {
  rule: Rule
  /**
   * `unreadable`: a rule in shadow could not read the request's match, key or cost (it is
   * noted, not refused); `no-key`: a key part is absent; `replaced`: another applying rule
   * replaces it.
   */
  why: 'unreadable' | 'no-key' | 'replaced'
}

/** The plan for a request. */
export type Plan =
  /** The kill switch is on, or an allow list matched: nothing is limited. */
  | { action: 'pass'; allowed?: string }
  /** A deny list matched and is enforced: refuse with 403. */
  | { action: 'deny'; denied: string }
  /** Charge these keys (possibly none). `wouldDeny` names a deny-list match in shadow mode. */
  | {
      action: 'limit'
      /** The keys to charge, in rule order. */
      checks: Check[]
      /** The other rules whose `match` holds, in the order found. */
      skipped: Skipped[]
      wouldDeny?: string
    }

/**
 * Plans a request: the kill switch, then the deny list (which wins over the allow list), then
 * the allow list, then every matching rule whose key parts are present, less those replaced by
 * another applying rule. A replacing rule's key is one the client cannot choose freely (the
 * parser refuses any other), so no invented value can drop a rule that counts the request. In
 * shadow mode nothing is refused: deny-list matches and denials are reported instead.
 *
 * @param ruleSet - the rules in force
 * @param facts - the request
 * @throws {BadRequestError} when a rule's match, key or cost cannot be read unambiguously
 */
export function planRequest(ruleSet: RuleSet, facts: RequestFacts): Plan {
  if (ruleSet.mode === 'off') return { action: 'pass' }
  const shadowAll = ruleSet.mode === 'shadow'
  const denied = ruleSet.deny?.(facts)
  if (denied !== undefined && !shadowAll) return { action: 'deny', denied }
  const allowed = ruleSet.allow?.(facts)
  if (allowed !== undefined) return { action: 'pass', allowed }

  const view = pathView(facts.path)
  const applying: { rule: Rule; key: string }[] = []
  const skipped: Skipped[] = []
  // Indexed, with the errors caught in place: this runs for every rule of every request, and a
  // closure per rule (or an iterator over the frozen list) is garbage per rule per request.
  const rules = ruleSet.rules
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!
    let key: string | null | undefined
    try {
      // `null`: the rule matches, but the request lacks a key part.
      key = matches(rule.match, facts, view) ? (limitKey(rule, facts) ?? null) : undefined
    } catch (error) {
      unreadable(error, rule, shadowAll || rule.shadow, skipped)
      continue
    }
    if (key === null) skipped.push({ rule, why: 'no-key' })
    else if (key !== undefined) applying.push({ rule, key })
  }
  const replaced = applying.some(({ rule }) => rule.replaces.length > 0)
    ? new Set(applying.flatMap(({ rule }) => rule.replaces))
    : undefined
  const checks: Check[] = []
  for (const { rule, key } of applying) {
    if (replaced?.has(rule.id)) {
      skipped.push({ rule, why: 'replaced' })
      continue
    }
    const shadow = shadowAll || rule.shadow
    let cost: number
    try {
      cost = requestCost(rule.cost, facts)
    } catch (error) {
      unreadable(error, rule, shadow, skipped)
      continue
    }
    const policy = rule.tiers ? tierPolicy(rule.policy, rule.tiers, facts) : rule.policy
    const failMode = shadow ? 'open' : rule.failMode
    const check: Check = {
      rule,
      policy,
      key,
      cost,
      shadow,
      failMode,
      consistency: rule.consistency,
    }
    if (rule.countOn) check.deferred = true
    checks.push(check)
    const inFlight = rule.countOn?.inFlight
    if (inFlight)
      checks.push({
        rule,
        policy: inFlight,
        key: `${key}|#in-flight`,
        cost: 1,
        shadow,
        failMode,
        inFlight: true,
      })
  }
  const plan: Plan = { action: 'limit', checks, skipped }
  if (denied !== undefined) plan.wouldDeny = denied
  return plan
}

/**
 * Handles what reading a rule's match, key or cost threw: a `BadRequestError` is thrown again
 * naming the rule, except for a rule in shadow, which never blocks, not even with a 400: its
 * unreadable request is noted in `skipped`. Anything else is thrown as it is.
 */
function unreadable(error: unknown, rule: Rule, shadow: boolean, skipped: Skipped[]): void {
  if (!(error instanceof BadRequestError)) throw error
  if (!shadow) throw new BadRequestError(error.field, error.message, rule.id)
  skipped.push({ rule, why: 'unreadable' })
}
