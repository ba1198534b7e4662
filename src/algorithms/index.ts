/**
 * @module algorithms
 * The algorithm registry: one entry per `algorithm` name a rule may use.
 */
import { concurrency } from './concurrency'
import { fixedWindow } from './fixed-window'
import { gcra } from './gcra'
import { leakyBucket } from './leaky-bucket'
import { slidingLog } from './sliding-log'
import { keyExpiresAtMs, withPenalty, type KeyState } from './penalty'
import { slidingWindow } from './sliding-window'
import { tokenBucket } from './token-bucket'
import type { Algorithm, AlgorithmName, Hold, Outcome, Policy } from './types'
import type { Decision } from '../types'

export type * from './types'
export type { SlidingWindowState } from './sliding-window'
export type { TokenBucketState } from './token-bucket'
export type { FixedWindowState } from './fixed-window'
export { nextLeaseExpiryMs, releaseLease, type ConcurrencyState } from './concurrency'
export type { GcraState } from './gcra'
export { MAX_SLIDING_LOG_LIMIT, type SlidingLogState } from './sliding-log'
export type { KeyState } from './penalty'
export { concurrency, fixedWindow, gcra, leakyBucket, slidingLog, slidingWindow, tokenBucket }

/** Every algorithm by name. */
export const ALGORITHMS = {
  'sliding-window': slidingWindow,
  'token-bucket': tokenBucket,
  'fixed-window': fixedWindow,
  'sliding-log': slidingLog,
  gcra,
  'leaky-bucket': leakyBucket,
  concurrency,
} as const satisfies { [N in AlgorithmName]: Algorithm<Extract<Policy, { algorithm: N }>, unknown> }

/** The registry's entry for a policy; the registry's type guarantees every name has one. */
function algorithmOf(policy: Policy): Algorithm<Policy, unknown> {
  return ALGORITHMS[policy.algorithm] as unknown as Algorithm<Policy, unknown>
}

/**
 * Decides a request for one key: the policy's algorithm inside the penalty box. This is what
 * the Durable Object runs.
 *
 * @param key - the stored key state, or `undefined` for a key never seen (or expired)
 * @param policy - the limit to apply
 * @param nowMs - the current time, read once by the caller
 * @param cost - units to take (0 to only look)
 * @param hold - how a reservation for a lessee takes them (see `reserve.ts`)
 * @returns the next key state (the very object passed in when nothing changed) and the decision
 */
export function chargeKey(
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number,
  cost: number,
  hold?: Hold
): Outcome<KeyState> {
  // The algorithm's state is opaque here: whatever it returned for this policy goes back to it.
  const algorithm = algorithmOf(policy)
  return withPenalty(key, policy, nowMs, cost, (state, units) =>
    algorithm.charge(state, policy, nowMs, units, hold)
  )
}

/**
 * The decision with when more than its `remaining` units are next available
 * ({@link Decision.moreInMs}): the wait before a charge of `remaining + 1` units would pass in
 * the key's state after the request, or the penalty lock's end if that is later. What the IETF
 * draft's `RateLimit` field calls `t`. The decision as it is when nothing more will come: the
 * quota is full, or the policy is a concurrency limit (slots come back when requests end, not
 * at a time); and for a shaper with room left, whose `remaining` counts waits, not units.
 *
 * @param decision - what `chargeKey` (or a gate) decided
 * @param key - the key's state after the request
 * @param policy - the policy it was decided under
 * @param nowMs - the time it was decided at
 */
export function withMoreIn(
  decision: Decision,
  key: KeyState | undefined,
  policy: Policy,
  nowMs: number
): Decision {
  if (policy.algorithm === 'concurrency' || decision.remaining >= decision.limit) return decision
  const lockedMs = Math.max(0, (key?.blockedUntilMs ?? 0) - nowMs)
  // A look, not a charge: the state it returns is dropped.
  const probe = algorithmOf(policy).charge(key?.state, policy, nowMs, decision.remaining + 1)
  if (probe.decision.allowed && lockedMs === 0) return decision
  const moreInMs = Math.max(lockedMs, probe.decision.allowed ? 0 : probe.decision.retryAfterMs)
  return { ...decision, moreInMs }
}

/**
 * Units charged for later that a charge now does not count yet (`Algorithm.pendingUnits`): 0
 * for an algorithm that charges none.
 *
 * @param key - a key state
 * @param policy - the policy it was computed under
 * @param nowMs - the time
 */
export function pendingUnitsOf(key: KeyState, policy: Policy, nowMs: number): number {
  const { state } = key
  return state === undefined ? 0 : (algorithmOf(policy).pendingUnits?.(state, policy, nowMs) ?? 0)
}

/**
 * When a stored key state may be deleted (Unix ms).
 *
 * @param key - a key state `chargeKey` returned for this policy
 * @param policy - the policy it was computed under
 */
export function keyStateExpiresAtMs(key: KeyState, policy: Policy): number {
  const { state } = key
  return keyExpiresAtMs(
    key,
    state === undefined ? undefined : algorithmOf(policy).expiresAtMs(state, policy)
  )
}
