/**
 * @module rules/plan
 * What the rules say to do with one request, before any counter is touched.
 */
import { BadRequestError } from '../errors'
import type { Policy } from '../algorithms'
import type { RequestFacts } from '../types'
import { requestCost } from './cost'
import { limitKey } from './key'
import { matchRules } from './match'
import type { Rule, RuleSet } from './parse'
import { tierPolicy } from './tiers'

/** One key to charge. */
export interface Check {
  rule: Rule
  /** The policy to apply: the rule's, or its tier's. */
  policy: Policy
  /** The limit key (`rule|value|…`). */
  key: string
  /** Units to take. */
  cost: number
  /** Counted, but a denial only logs "would deny". */
  shadow: boolean
}

/** The plan for a request. */
export type Plan =
  /** The kill switch is on, or an allow list matched: nothing is limited. */
  | { action: 'pass'; allowed?: string }
  /** A deny list matched and is enforced: refuse with 403. */
  | { action: 'deny'; denied: string }
  /** Charge these keys (possibly none). `wouldDeny` names a deny-list match in shadow mode. */
  | { action: 'limit'; checks: Check[]; wouldDeny?: string }

/**
 * Plans a request: the kill switch, then the deny list (which wins over the allow list), then
 * the allow list, then every matching rule whose key parts are present, less those replaced by
 * another applying rule. In shadow mode nothing is refused: deny-list matches and denials are
 * reported instead.
 *
 * @param ruleSet - the rules in force
 * @param facts - the request
 * @throws {BadRequestError} when a rule's key or cost cannot be read from the request
 */
export function planRequest(ruleSet: RuleSet, facts: RequestFacts): Plan {
  if (ruleSet.mode === 'off') return { action: 'pass' }
  const shadowAll = ruleSet.mode === 'shadow'
  const denied = ruleSet.deny?.(facts)
  if (denied !== undefined && !shadowAll) return { action: 'deny', denied }
  const allowed = ruleSet.allow?.(facts)
  if (allowed !== undefined) return { action: 'pass', allowed }

  const applying: { rule: Rule; key: string }[] = []
  for (const rule of matchRules(ruleSet, facts)) {
    const key = forRule(rule, () => limitKey(rule, facts))
    if (key !== undefined) applying.push({ rule, key })
  }
  const replaced = new Set(applying.flatMap(({ rule }) => rule.replaces))
  const checks = applying
    .filter(({ rule }) => !replaced.has(rule.id))
    .map(({ rule, key }) => ({
      rule,
      policy: rule.tiers
        ? tierPolicy(rule.policy, rule.tiers, rule.explicitBurst, facts)
        : rule.policy,
      key,
      cost: forRule(rule, () => requestCost(rule.cost, facts)),
      shadow: shadowAll || rule.shadow,
    }))
  return denied === undefined
    ? { action: 'limit', checks }
    : { action: 'limit', checks, wouldDeny: denied }
}

/** Runs `read`, naming the rule in any `BadRequestError` it throws. */
function forRule<T>(rule: Rule, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof BadRequestError)
      throw new BadRequestError(error.field, error.message, rule.id)
    throw error
  }
}
