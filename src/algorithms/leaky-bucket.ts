/**
 * @module algorithms/leaky-bucket
 * Leaky bucket, leaking `limit` units per `period` and holding at most `burst`. One number of
 * state: when the bucket will have drained (`drainsAtMs`); its level now is
 * `(drainsAt − now) × rate`.
 *
 * - **Meter** (policing): a request that would overflow the bucket is denied; others pass at once.
 * - **Shaper**: an admitted request waits at the edge until everything ahead of it has leaked
 *   (`delayMs`), so the origin sees a smooth `limit / period`; a request that would overflow the
 *   bucket, or wait longer than `maxWaitMs`, is denied.
 *
 * **Pro:** the shaper turns bursts into an even flow. **Con:** the shaper adds latency, and a
 * waiting request holds a Worker invocation open.
 */
import type { Decision } from '../types'
import { ceilMs, EPSILON, type Algorithm, type LeakyBucketPolicy } from './types'

/** When the bucket will be empty. */
export interface LeakyBucketState {
  drainsAtMs: number
}

/** The leaky bucket, as a meter or a shaper. */
export const leakyBucket: Algorithm<LeakyBucketPolicy, LeakyBucketState> = {
  charge(state, policy, nowMs, cost) {
    const rate = policy.limit / policy.periodMs
    const drainsAt = Math.max(state?.drainsAtMs ?? nowMs, nowMs)
    const level = (drainsAt - nowMs) * rate
    const waitMs = drainsAt - nowMs
    const fits = level + cost <= policy.burst + EPSILON
    const allowed = fits && (!policy.shape || waitMs <= (policy.maxWaitMs ?? 0) + EPSILON)
    const next = allowed ? drainsAt + cost / rate : drainsAt
    const decision: Decision = {
      allowed,
      limit: policy.burst,
      remaining: remaining(next - nowMs, rate, policy),
      resetAtMs: Math.ceil(next),
      retryAfterMs: allowed ? 0 : Math.max(1, retryAfter(level, cost, waitMs, rate, policy)),
    }
    if (allowed && policy.shape) decision.delayMs = Math.max(0, Math.ceil(waitMs - EPSILON))
    return { state: allowed && cost > 0 ? { drainsAtMs: next } : state, decision }
  },

  expiresAtMs(state) {
    return Math.ceil(state.drainsAtMs)
  },
}

/** Units still admissible now: room in the bucket, and for a shaper, room within `maxWaitMs`. */
function remaining(waitAfterMs: number, rate: number, policy: LeakyBucketPolicy): number {
  const room = Math.floor(policy.burst - waitAfterMs * rate + EPSILON)
  if (!policy.shape) return Math.max(0, room)
  const slack = (policy.maxWaitMs ?? 0) - waitAfterMs
  const withinWait = slack < -EPSILON ? 0 : Math.floor(slack * rate + EPSILON) + 1
  return Math.max(0, Math.min(room, withinWait))
}

/** Until the request would fit in the bucket, and (for the shaper) its wait be short enough. */
function retryAfter(
  level: number,
  cost: number,
  waitMs: number,
  rate: number,
  policy: LeakyBucketPolicy
): number {
  const untilFits = ceilMs((level + Math.min(cost, policy.burst) - policy.burst) / rate)
  const untilShortWait = policy.shape ? ceilMs(waitMs - (policy.maxWaitMs ?? 0)) : 0
  return Math.max(untilFits, untilShortWait)
}
