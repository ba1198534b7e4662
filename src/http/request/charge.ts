/**
 * @module http/request/charge
 * Charging every key of a request in its Durable Object, in parallel.
 */
import { LimiterUnavailableError } from '../../errors'
import {
  charge,
  decidedLocally,
  releaseSlot,
  type ChargeResult,
  type LimiterNamespace,
} from '../../limiter/client'
import type { Check } from '../../rules'
import type { Decision } from '../../types'
import type { Charged, RuleDecision } from '../shared/rule-decision'
import { logEvent } from '../../log'

type Outcome =
  { check: Check; result: ChargeResult } | { check: Check; error: LimiterUnavailableError }

/**
 * Charges every key in its Durable Object, all at once, and sorts the results by kind. Each
 * check goes to the client as it is: its fail mode already says that a rule in shadow, which
 * never blocks, fails open.
 *
 * Keys this isolate already knows to be denied are answered first, without a call. If one of
 * them refuses the request (a rule that rejects, not in shadow), nothing else is charged: the
 * request is refused, and its other rules neither count it nor report a decision. A known
 * denial of a rule in shadow or of a degrading rule refuses nothing: the request goes on, so
 * every other rule is charged as on the object path (and one that rejects may still refuse it).
 *
 * @param namespace - the `LIMITER` binding
 * @param checks - the plan's checks
 * @param timeoutMs - the longest wait per key (a concurrency queue's wait comes on top)
 */
export async function chargeAll(
  namespace: LimiterNamespace,
  checks: readonly Check[],
  timeoutMs: number
): Promise<Charged> {
  const local = checks.map((check) => decidedLocally(check))
  const known = local.some((item) => item instanceof Promise)
    ? await Promise.all(local)
    : (local as (Decision | undefined)[])
  const blocked = checks.some((check, i) => known[i] !== undefined && refuses(check))
  const found: (Outcome | Promise<Outcome>)[] = []
  let waiting = false
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!
    const decision = known[i]
    if (decision) found.push({ check, result: { enforced: true, decision, local: true } })
    else if (blocked) continue
    else {
      const charged = charge(namespace, check, timeoutMs)
      if (!(charged instanceof Promise)) found.push({ check, result: charged })
      else {
        waiting = true
        found.push(
          charged.then(
            (result) => ({ check, result }),
            (error: unknown) => {
              // Kept, not thrown: one 503 names every rule that failed closed, after all have
              // answered.
              if (error instanceof LimiterUnavailableError) return { check, error }
              throw error
            }
          )
        )
      }
    }
  }
  // Decisions taken in the isolate (a lease's units, a repeated denial) need no wait at all.
  const outcomes = waiting ? await Promise.all(found) : (found as Outcome[])
  const charged: Charged = { decisions: [], unenforced: [], failedClosed: [] }
  for (const outcome of outcomes) {
    if ('error' in outcome) charged.failedClosed.push(outcome)
    else if (outcome.result.enforced)
      charged.decisions.push({ check: outcome.check, decision: outcome.result.decision })
    else charged.unenforced.push(outcome.check.rule.id)
  }
  return charged
}

/** Whether a denial under this check refuses the request, rather than noting or degrading it. */
function refuses(check: Check): boolean {
  return !check.shadow && check.rule.degrade === undefined
}

/**
 * Releases every concurrency slot the request took (after its response, or when it was refused
 * after all). Failures are only logged: a lease left behind expires on its own.
 *
 * @param namespace - the `LIMITER` binding
 * @param decisions - the request's decisions
 * @param timeoutMs - the longest wait per release
 */
export async function releaseSlots(
  namespace: LimiterNamespace,
  decisions: readonly RuleDecision[],
  timeoutMs: number
): Promise<void> {
  await Promise.all(
    decisions.flatMap(({ check, decision }) =>
      check.policy.algorithm === 'concurrency' && decision.leaseId !== undefined
        ? [releaseSlot(namespace, check, check.policy, decision.leaseId, timeoutMs)]
        : []
    )
  )
}

/**
 * The decisions that refuse the request, in rule order. A rule in shadow never refuses: that it
 * would have is logged (`rate-limit-would-deny`).
 *
 * @param decisions - the request's decisions
 */
export function refusals(decisions: readonly RuleDecision[]): RuleDecision[] {
  const denied: RuleDecision[] = []
  for (const item of decisions) {
    if (item.decision.allowed) continue
    if (!item.check.shadow) denied.push(item)
    else
      logEvent('warn', 'rate-limit-would-deny', {
        rule: item.check.rule.id,
        retryAfterMs: item.decision.retryAfterMs,
      })
  }
  return denied
}
