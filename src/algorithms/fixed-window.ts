/**
 * @module algorithms/fixed-window
 * Fixed window counter, epoch-aligned: at most `limit` units per window `[k·period, (k+1)·period)`.
 *
 * **Pro:** one counter, the simplest to reason about; what envoyproxy/ratelimit does.
 * **Con:** up to 2× the limit can pass around a window boundary (the end of one window and the
 * start of the next).
 *
 * With `countDenied` (envoyproxy/ratelimit's behaviour, which increments before comparing) a
 * denied request is counted too, so a flood keeps its window exhausted.
 */
import type { Decision } from '../types'
import type { Algorithm, FixedWindowPolicy } from './types'

/** The count in the current window. */
export interface FixedWindowState {
  /** Start of the window (Unix ms, a multiple of the period). */
  windowStartMs: number
  /** Units counted in it. */
  count: number
}

/** The fixed window counter. */
export const fixedWindow: Algorithm<FixedWindowPolicy, FixedWindowState> = {
  charge(state, policy, nowMs, cost) {
    const windowStartMs = Math.floor(nowMs / policy.periodMs) * policy.periodMs
    // A clock that went back stays in the window it had.
    const current =
      state && windowStartMs <= state.windowStartMs ? state : { windowStartMs, count: 0 }
    const allowed = current.count + cost <= policy.limit
    const counts = cost > 0 && (allowed || policy.countDenied === true)
    const count = counts ? current.count + cost : current.count
    const resetAtMs = current.windowStartMs + policy.periodMs
    const atMs = Math.max(nowMs, current.windowStartMs)
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - count),
      resetAtMs: count > 0 ? resetAtMs : atMs,
      retryAfterMs: allowed ? 0 : Math.max(1, resetAtMs - atMs),
    }
    return { state: counts ? { windowStartMs: current.windowStartMs, count } : state, decision }
  },

  expiresAtMs(state, policy) {
    return state.windowStartMs + policy.periodMs
  },
}
