/**
 * @module algorithms/refund
 * Handing back units that were reserved (`reserve.ts`) and not spent, where the algorithm can
 * take them back without ever admitting more than a key that never reserved them would:
 *
 * - fixed and sliding window: only in the window they were charged in, which must still be the
 *   current one; the count goes down, never below 0;
 * - token bucket: the tokens go back, the bucket capped at `burst`;
 * - GCRA: the TAT moves back by the units' emission time, never before now.
 */
import type { FixedWindowState } from './fixed-window'
import type { GcraState } from './gcra'
import type { KeyState } from './penalty'
import { isWindowed, windowOf, type LeasablePolicy } from './reserve'
import type { SlidingWindowState } from './sliding-window'
import type { TokenBucketState } from './token-bucket'

/**
 * The key state with `units` handed back. A penalty lock stays as it is.
 *
 * @param key - the stored key state
 * @param policy - the policy the units were reserved under
 * @param nowMs - the current time
 * @param units - unspent units
 * @param chargedAtMs - when they were reserved (the object's clock)
 * @returns the next state, or the very object passed in when nothing can be handed back
 */
export function refundKey(
  key: KeyState | undefined,
  policy: LeasablePolicy,
  nowMs: number,
  units: number,
  chargedAtMs: number
): KeyState | undefined {
  if (key?.state === undefined || !(units > 0)) return key
  const state = refundState(key.state, policy, nowMs, units, chargedAtMs)
  return state === key.state ? key : { ...key, state }
}

function refundState(
  state: unknown,
  policy: LeasablePolicy,
  nowMs: number,
  units: number,
  chargedAtMs: number
): unknown {
  if (isWindowed(policy)) {
    const windowStartMs = windowOf(policy, chargedAtMs)
    const counted = state as { windowStartMs: number }
    // A later window has begun (or the state was started afresh in another): the units
    // counted in theirs can no longer be spent, and are no one's to give back here.
    if (counted.windowStartMs !== windowStartMs || windowOf(policy, nowMs) !== windowStartMs)
      return state
    if (policy.algorithm === 'fixed-window') {
      const fixed = state as FixedWindowState
      return fixed.count > 0 ? { ...fixed, count: Math.max(0, fixed.count - units) } : state
    }
    const sliding = state as SlidingWindowState
    return sliding.current > 0
      ? { ...sliding, current: Math.max(0, sliding.current - units) }
      : state
  }
  if (policy.algorithm === 'token-bucket') {
    const bucket = state as TokenBucketState
    const elapsedMs = Math.max(0, nowMs - bucket.updatedAtMs)
    const refilled = Math.min(
      policy.burst,
      bucket.tokens + (elapsedMs * policy.limit) / policy.periodMs
    )
    if (refilled >= policy.burst) return state
    return {
      tokens: Math.min(policy.burst, refilled + units),
      updatedAtMs: Math.max(nowMs, bucket.updatedAtMs),
    }
  }
  const { tatMs } = state as GcraState
  if (tatMs <= nowMs) return state
  return { tatMs: Math.max(nowMs, tatMs - (units * policy.periodMs) / policy.limit) }
}
