/**
 * @module tools/fuzz-oracle
 * An exact oracle beside the limiter, for policy mixes (`fuzz-mixes.ts`): from each request's
 * plan (the rules' own matching, `planRequest`) and what came back, it counts per rule and key
 * what reached the origin, and says where a limit was exceeded or a request went uncounted.
 *
 * - No rule that rejects (not in shadow, not a concurrency limit) lets more requests of a key
 *   reach the origin than its capacity (plus what refills meanwhile); a rule counting responses,
 *   no more counted responses than that plus the requests in flight at once, less one; a
 *   degrading rule, no more requests than that which it did not degrade.
 * - Every rule a request matches counts it unless the request was refused: a key's object holds
 *   at least as many units as requests of it reached the origin (up to the capacity; a
 *   degrading rule: those not degraded).
 */
import type { Policy } from '../src/algorithms'
import { requestFacts } from '../src/http/request/facts'
import { planRequest, type Check, type Rule, type RuleSet } from '../src/rules'

/** What came back for one request. */
export interface MixAnswer {
  status: number
  /** Whether the limiter answered itself (a problem+json), rather than the origin. */
  own: boolean
  /** The rule named by `X-RateLimit-Degraded`, if the request was degraded. */
  degradedBy: string | null
}

/** What the oracle knows of one rule's key. */
interface KeyTally {
  check: Check
  /** Requests that reached the origin. */
  reached: number
  /** Of those, the ones not degraded. */
  plain: number
  /** Of those, the responses the rule counts (`countOn`). */
  countedResponses: number
}

/** The units a policy holds at most: its limit, or a bucket's burst. */
export function capacityOf(policy: Policy): number {
  return 'burst' in policy ? policy.burst : policy.limit
}

/** Units that come back within `elapsedMs` (0 for windows that never end within it). */
function refillOf(policy: Policy, elapsedMs: number): number {
  return policy.algorithm === 'token-bucket' || policy.algorithm === 'gcra'
    ? Math.ceil((policy.limit * elapsedMs) / policy.periodMs)
    : 0
}

const counts = (rule: Rule) => rule.policy.algorithm !== 'concurrency' && rule.countOn === undefined

/** Tallies a mix's requests against its rules. */
export class MixOracle {
  readonly #ruleSet: RuleSet
  readonly #inFlightAtOnce: number
  readonly #keys = new Map<string, KeyTally>()
  /** Requests the rules found unreadable (refused with 400) or that matched no rule. */
  unplanned = 0

  /**
   * @param ruleSet - the mix's rules, parsed
   * @param inFlightAtOnce - the most requests the mix sends at once
   */
  constructor(ruleSet: RuleSet, inFlightAtOnce: number) {
    this.#ruleSet = ruleSet
    this.#inFlightAtOnce = inFlightAtOnce
  }

  /**
   * Notes one request and its answer.
   *
   * @param request - the request as sent
   * @param answer - what came back
   */
  note(request: Request, answer: MixAnswer): void {
    let checks: readonly Check[]
    try {
      const plan = planRequest(this.#ruleSet, requestFacts(request))
      checks = plan.action === 'limit' ? plan.checks : []
    } catch {
      checks = []
    }
    if (checks.length === 0) this.unplanned++
    const reached = !answer.own
    for (const check of checks) {
      if (check.inFlight) continue
      const id = `${check.rule.id}\n${check.key}`
      let tally = this.#keys.get(id)
      if (!tally) this.#keys.set(id, (tally = { check, reached: 0, plain: 0, countedResponses: 0 }))
      if (!reached) continue
      tally.reached++
      if (answer.degradedBy === null) tally.plain++
      if (check.rule.countOn?.counts(answer.status)) tally.countedResponses++
    }
  }

  /**
   * Every limit exceeded, as messages (none: all held).
   *
   * @param elapsedMs - how long the mix ran (tokens refill meanwhile)
   */
  exceeded(elapsedMs: number): string[] {
    const found: string[] = []
    for (const { check, reached, plain, countedResponses } of this.#keys.values()) {
      const { rule } = check
      if (rule.shadow || rule.policy.algorithm === 'concurrency') continue
      const bound = capacityOf(check.policy) + refillOf(check.policy, elapsedMs)
      const [what, seen, most] = rule.countOn
        ? ['counted responses', countedResponses, bound + this.#slack(rule)]
        : rule.degrade
          ? ['requests not degraded', plain, bound]
          : ['requests', reached, bound]
      if (seen > most)
        found.push(`${rule.id} ${check.key}: ${seen} ${what} reached the origin, at most ${most}`)
    }
    return found
  }

  /**
   * The keys whose objects must hold units, with the least each must hold: every request that
   * reached the origin, up to the capacity (less what refilled meanwhile).
   *
   * @param elapsedMs - how long the mix ran
   */
  mustHaveCounted(elapsedMs: number): { check: Check; atLeast: number }[] {
    const out: { check: Check; atLeast: number }[] = []
    for (const { check, reached, plain } of this.#keys.values()) {
      if (!counts(check.rule)) continue
      const seen = check.rule.degrade ? plain : reached
      const atLeast = Math.min(seen, capacityOf(check.policy)) - refillOf(check.policy, elapsedMs)
      if (atLeast > 0) out.push({ check, atLeast })
    }
    return out
  }

  /** Responses of a key in flight at once beyond the first: each may pass the check alone. */
  #slack(rule: Rule): number {
    return Math.min(this.#inFlightAtOnce, rule.countOn?.inFlight?.limit ?? Infinity) - 1
  }
}
