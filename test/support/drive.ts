/**
 * @module test/support/drive
 * Runs an algorithm for a burst of cost-1 requests at one instant.
 */
import type { Algorithm, Policy } from '../../src/algorithms'

/**
 * Sends `count` requests at `nowMs`, threading the state through.
 *
 * @returns the final state and how many were allowed
 */
export function drive<P extends Policy, S>(
  algorithm: Algorithm<P, S>,
  policy: P,
  state: S | undefined,
  count: number,
  nowMs: number
) {
  let allowed = 0
  for (let i = 0; i < count; i++) {
    const outcome = algorithm.charge(state, policy, nowMs, 1)
    state = outcome.state
    if (outcome.decision.allowed) allowed++
  }
  return { state, allowed }
}
