/**
 * @module http/charge
 * Charging every key of a request in its Durable Object, in parallel.
 */
import { LimiterUnavailableError } from '../errors'
import { acquireSlot, limit, releaseSlot, type LimiterNamespace } from '../limiter/client'
import type { Check, Rule } from '../rules'
import type { RuleDecision } from './headers'

/** The outcome of charging every matched key, in rule order. */
export interface Charged {
  decisions: RuleDecision[]
  /** Rules that failed open. */
  unenforced: string[]
  /** Rules that failed closed. */
  failedClosed: { rule: Rule; error: LimiterUnavailableError }[]
}

/**
 * Charges every key in its Durable Object, all at once, and sorts the results by kind. A rule in
 * shadow never blocks, so its failure counts as unenforced whatever its fail mode.
 */
export async function chargeAll(
  namespace: LimiterNamespace,
  checks: Check[],
  timeoutMs: number
): Promise<Charged> {
  const results = await Promise.all(
    checks.map(({ rule, policy, key, cost, shadow }) => {
      const call = {
        ruleId: rule.id,
        key,
        cost,
        failMode: shadow ? ('open' as const) : rule.failMode,
      }
      const charge =
        policy.algorithm === 'concurrency'
          ? acquireSlot(namespace, { ...call, policy }, timeoutMs)
          : limit(namespace, { ...call, policy }, timeoutMs)
      return charge.catch((error: unknown) => {
        if (error instanceof LimiterUnavailableError) return error
        throw error
      })
    })
  )
  const charged: Charged = { decisions: [], unenforced: [], failedClosed: [] }
  results.forEach((result, index) => {
    const { rule, policy, shadow } = checks[index]!
    if (result instanceof LimiterUnavailableError)
      charged.failedClosed.push({ rule, error: result })
    else if (result.enforced)
      charged.decisions.push({
        rule,
        policy,
        key: checks[index]!.key,
        decision: result.decision,
        shadow,
      })
    else charged.unenforced.push(rule.id)
  })
  return charged
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
    decisions.flatMap(({ rule, policy, decision, key }) =>
      policy.algorithm === 'concurrency' && decision.leaseId !== undefined
        ? [
            releaseSlot(
              namespace,
              { ruleId: rule.id, key: key!, policy },
              decision.leaseId,
              timeoutMs
            ),
          ]
        : []
    )
  )
}
