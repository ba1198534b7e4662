/**
 * @module test/support/charge-calls
 * Calls into the limiter's client, as its tests make them.
 */
import { env } from 'cloudflare:workers'
import type { Policy } from '../../src/algorithms'
import type { ChargeCall, LimiterNamespace } from '../../src/limiter/client'

/** Ample for a decision: a first call to a new object can take over a second on a loaded machine. */
export const CALL_MS = 10_000

/** The objects that fail on purpose (`flaky-limiter-object.ts`), as the client takes them. */
export const flaky = env.FLAKY_LIMITER as unknown as LimiterNamespace

/**
 * Makes the calls of rule `ruleId` under `policy`: each on the key `ruleId|key`, costing 1 and
 * failing open, with `fields` on top.
 *
 * @param ruleId - the rule, and the prefix of its keys
 * @param policy - the policy every call carries
 */
export function chargeCalls(ruleId: string, policy: Policy) {
  return (key: string, fields: Partial<ChargeCall> = {}): ChargeCall => ({
    rule: { id: ruleId },
    key: `${ruleId}|${key}`,
    policy,
    cost: 1,
    failMode: 'open',
    ...fields,
  })
}
