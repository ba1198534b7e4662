/**
 * @module algorithms/gate
 * A check that charges only a refusal: what a rule counting responses (`countOn`) asks of a
 * key before the origin. Pure.
 */
import { chargeKey, type KeyState, type Outcome, type Policy } from './index'

/**
 * Whether a request of `cost` fits now, charging nothing when it does: the units are charged
 * after the origin answers, if its response counts. A refusal is kept as a charge would keep
 * it (a penalty lock starts; a fixed window with `countDenied` counts it), so a key over its
 * limit is refused as it would be with every request counted. An allowed check reports the
 * key as it is (`remaining` before this request's units).
 *
 * @param key - the stored key state
 * @param policy - the limit
 * @param nowMs - the current time
 * @param cost - what the request would take
 * @returns the next key state (the very object passed in when allowed) and the decision
 */
export function gateKey(
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number,
  cost: number
): Outcome<KeyState | undefined> {
  const charged = chargeKey(key, policy, nowMs, cost)
  if (!charged.decision.allowed) return charged
  return { state: key, decision: chargeKey(key, policy, nowMs, 0).decision }
}
