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
 *
 * Leased quotas may charge units ahead for the next window (`next`): they become its count.
 */
import type { Decision } from '../types'
import type { Algorithm, FixedWindowPolicy } from './types'

/** The count in the current window. */
export interface FixedWindowState {
  /** Start of the window (Unix ms, a multiple of the period). */
  windowStartMs: number
  /** Units counted in it. */
  count: number
  /** Units charged ahead for the window after it (leased quotas), if any. */
  next?: number
}

/** The state in the window containing `nowMs`; a clock that went back stays in the one it had. */
function advance(
  state: FixedWindowState | undefined,
  periodMs: number,
  nowMs: number
): FixedWindowState {
  const windowStartMs = Math.floor(nowMs / periodMs) * periodMs
  if (state && windowStartMs <= state.windowStartMs) return state
  const ahead = state && windowStartMs - state.windowStartMs === periodMs ? (state.next ?? 0) : 0
  return { windowStartMs, count: ahead }
}

/** The fixed window counter. */
export const fixedWindow: Algorithm<FixedWindowPolicy, FixedWindowState> = {
  pendingUnits: (state, policy, nowMs) => advance(state, policy.periodMs, nowMs).next ?? 0,

  charge(state, policy, nowMs, cost, hold) {
    const current = advance(state, policy.periodMs, nowMs)
    const ahead = hold?.ahead === true
    const counted = ahead ? (current.next ?? 0) : current.count
    const allowed = counted + cost <= policy.limit
    const counts = cost > 0 && (allowed || (!ahead && policy.countDenied === true))
    const next: FixedWindowState = !counts
      ? current
      : ahead
        ? { ...current, next: counted + cost }
        : { ...current, count: counted + cost }
    const resetAtMs = current.windowStartMs + policy.periodMs
    const atMs = Math.max(nowMs, current.windowStartMs)
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      // Looking ahead, what is left is what the next window can still be charged.
      remaining: Math.max(0, policy.limit - (ahead ? (next.next ?? 0) : next.count)),
      resetAtMs: next.count > 0 ? resetAtMs : atMs,
      retryAfterMs: allowed ? 0 : Math.max(1, resetAtMs - atMs),
    }
    return { state: counts ? next : state, decision }
  },

  expiresAtMs(state, policy) {
    return state.windowStartMs + ((state.next ?? 0) > 0 ? 2 : 1) * policy.periodMs
  },

  refund(state, policy, nowMs, units, lot) {
    const current = advance(state, policy.periodMs, nowMs)
    const windowStartMs = Math.floor(lot.validFromMs / policy.periodMs) * policy.periodMs
    if (windowStartMs === current.windowStartMs && current.count > 0)
      return { ...current, count: Math.max(0, current.count - units) }
    const ahead = current.next ?? 0
    if (windowStartMs === current.windowStartMs + policy.periodMs && ahead > 0)
      return { ...current, next: Math.max(0, ahead - units) }
    return state
  },
}
