/**
 * @module http/request/count-on
 * After the origin answers: the responses of rules with `countOn` are charged (in `waitUntil`),
 * and the headers show each such rule's key as this charge leaves it. Requests are only
 * checked before the origin (see `algorithms/gate.ts`), so N requests of one key in flight at
 * once may all pass a check that only N − 1 of them would pass when counted one by one; a
 * rule's `maxInFlight` bounds N, by a slot each request holds until its response is charged.
 */
import { charge, type LimiterNamespace } from '../../limiter/client'
import { responseCost } from '../../rules'
import { releaseSlots } from './charge'
import type { RuleDecision } from '../shared/rule-decision'
import { logEvent } from '../../log'

/** What counting a response gives: the decisions to show, and the charges under way. */
export interface Counted {
  /** The request's decisions, a counted rule's with its charge taken off `remaining`. */
  decisions: RuleDecision[]
  /** Settles once every charge has landed (or failed) and every in-flight slot is released. */
  done: Promise<void>
  /** Response headers that are the origin's word to the limiter only (cost headers). */
  internalHeaders: string[]
}

/**
 * Charges the response for every rule that counts it, and frees the request's `maxInFlight`
 * slots once those charges have landed. A charge that fails is logged by the client (as any
 * fail-open) and never changes the response.
 *
 * @param namespace - the `LIMITER` binding
 * @param decisions - the request's decisions (in-flight slots among them)
 * @param response - the origin's response
 * @param timeoutMs - the longest wait per call
 */
export function countResponse(
  namespace: LimiterNamespace,
  decisions: readonly RuleDecision[],
  response: Response,
  timeoutMs: number
): Counted {
  const shown: RuleDecision[] = []
  const charges: Promise<unknown>[] = []
  const internalHeaders: string[] = []
  for (const item of decisions) {
    const { check, decision } = item
    const countOn = check.rule.countOn
    if (check.inFlight || !check.deferred || !countOn) {
      if (!check.inFlight) shown.push(item)
      continue
    }
    if (countOn.costHeader !== undefined) internalHeaders.push(countOn.costHeader)
    if (!decision.allowed || !countOn.counts(response.status)) {
      shown.push(item)
      continue
    }
    const capacity = 'burst' in check.policy ? check.policy.burst : check.policy.limit
    const header =
      countOn.costHeader === undefined ? null : response.headers.get(countOn.costHeader)
    const cost = responseCost(countOn, header, check.cost, capacity)
    if (cost > 0)
      charges.push(
        Promise.resolve(charge(namespace, { ...check, deferred: false, cost }, timeoutMs)).catch(
          (error: unknown) =>
            logEvent('error', 'count-on-charge-failed', {
              rule: check.rule.id,
              error: String(error),
            })
        )
      )
    shown.push({
      check,
      decision: { ...decision, remaining: Math.max(0, decision.remaining - cost) },
    })
  }
  const inFlight = decisions.filter(({ check }) => check.inFlight)
  const done = Promise.all(charges).then(() => releaseSlots(namespace, inFlight, timeoutMs))
  return { decisions: shown, done, internalHeaders }
}
