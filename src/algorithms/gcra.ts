/**
 * @module algorithms/gcra
 * Generic cell rate algorithm (virtual scheduling). One number of state: the theoretical arrival
 * time (TAT) of the next request if requests came exactly at the rate. With emission interval
 * `T = period / limit`, a request of `cost` is admitted when `max(TAT, now) + cost·T − now` stays
 * within `burst·T`; admitting moves the TAT forward by `cost·T`.
 *
 * **Pro:** a single timestamp per key; the exact long-run rate, with `burst` as the tolerance.
 * **Con:** the same shape as a token bucket (it is one, stored differently); less familiar to read.
 */
import type { Decision } from '../types'
import { ceilMs, EPSILON, type Algorithm, type GcraPolicy } from './types'

/** The theoretical arrival time. */
export interface GcraState {
  tatMs: number
}

/** GCRA. */
export const gcra: Algorithm<GcraPolicy, GcraState> = {
  charge(state, policy, nowMs, cost) {
    const interval = policy.periodMs / policy.limit
    const capacity = policy.burst * interval
    const tat = Math.max(state?.tatMs ?? nowMs, nowMs)
    const next = tat + cost * interval
    const allowed = next - nowMs <= capacity + EPSILON * interval
    const kept = allowed ? next : tat
    const decision: Decision = {
      allowed,
      limit: policy.burst,
      remaining: Math.max(0, Math.floor((capacity - (kept - nowMs)) / interval + EPSILON)),
      resetAtMs: Math.ceil(kept),
      retryAfterMs: allowed ? 0 : Math.max(1, ceilMs(next - capacity - nowMs)),
    }
    return { state: allowed && cost > 0 ? { tatMs: next } : state, decision }
  },

  expiresAtMs(state) {
    return Math.ceil(state.tatMs)
  },
}
