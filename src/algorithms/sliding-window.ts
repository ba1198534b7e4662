/**
 * @module algorithms/sliding-window
 * Sliding-window counter (Cloudflare's "counting things" formula).
 *
 * Two epoch-aligned fixed windows are kept: the count in the current one and in the previous
 * one. The rate over the sliding window ending now is estimated as
 *
 *     estimate = previous × (period − elapsed) / period + current
 *
 * where `elapsed` is the time since the current window began: the previous window's requests
 * are assumed evenly spread, and only the share of it still inside the sliding window counts.
 * A request of `cost` units is allowed when `estimate + cost ≤ limit`.
 *
 * **Pro:** three numbers of state, O(1), no boundary burst of 2× like a fixed window.
 * **Con:** approximate: a previous window whose traffic was bunched at its end is under-counted.
 */
import type { Decision } from '../types'
import { ceilMs, EPSILON, type Algorithm, type SlidingWindowPolicy } from './types'

/** Counts for the current and previous fixed windows. */
export interface SlidingWindowState {
  /** Start of the current window (Unix ms, a multiple of the period). */
  windowStartMs: number
  /** Units taken in the current window. */
  current: number
  /** Units taken in the window before it. */
  previous: number
}

/** Rolls the state forward to the window containing `nowMs`; a clock that went back keeps it. */
function advance(
  state: SlidingWindowState | undefined,
  periodMs: number,
  nowMs: number
): SlidingWindowState {
  const windowStartMs = Math.floor(nowMs / periodMs) * periodMs
  if (!state) return { windowStartMs, current: 0, previous: 0 }
  if (windowStartMs <= state.windowStartMs) return state
  const previous = windowStartMs - state.windowStartMs === periodMs ? state.current : 0
  return { windowStartMs, current: 0, previous }
}

/** The weighted count over the sliding window ending at `atMs`. */
function estimate(state: SlidingWindowState, periodMs: number, atMs: number): number {
  const elapsedMs = atMs - state.windowStartMs
  return (state.previous * (periodMs - elapsedMs)) / periodMs + state.current
}

/** When the estimate drops to 0 again, i.e. every counted unit has slid out. */
function fullResetAtMs(state: SlidingWindowState, periodMs: number, atMs: number): number {
  if (state.current > 0) return state.windowStartMs + 2 * periodMs
  if (state.previous > 0) return state.windowStartMs + periodMs
  return atMs
}

/**
 * The earliest time at which `cost` more units fit under `limit`. Within the current window
 * the estimate falls linearly as the previous window slides out; if the current window alone
 * leaves no room, the wait runs into the next window, where `current` becomes `previous`.
 */
function allowedAtMs(state: SlidingWindowState, policy: SlidingWindowPolicy, cost: number): number {
  const { limit, periodMs } = policy
  const room = limit - cost
  if (state.current <= room + EPSILON) {
    const share = 1 - (room - state.current) / state.previous
    return state.windowStartMs + ceilMs(periodMs * share)
  }
  const share = 1 - room / state.current
  return state.windowStartMs + periodMs + ceilMs(periodMs * share)
}

/** The sliding-window counter. */
export const slidingWindow: Algorithm<SlidingWindowPolicy, SlidingWindowState> = {
  charge(state, policy, nowMs, cost) {
    const current = advance(state, policy.periodMs, nowMs)
    // A clock that moved backwards is read as "no time has passed".
    const atMs = Math.max(nowMs, current.windowStartMs)
    const before = estimate(current, policy.periodMs, atMs)
    const allowed = before + cost <= policy.limit + EPSILON
    const kept = allowed && cost > 0 ? { ...current, current: current.current + cost } : current
    const after = allowed ? before + cost : before
    const resetAtMs = fullResetAtMs(kept, policy.periodMs, atMs)
    let retryAfterMs = 0
    if (!allowed) {
      // A cost above the limit never fits; point at the full reset, the best there is.
      retryAfterMs =
        cost > policy.limit
          ? Math.max(1, resetAtMs - atMs)
          : Math.max(1, allowedAtMs(current, policy, cost) - atMs)
    }
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, Math.floor(policy.limit - after + EPSILON)),
      resetAtMs,
      retryAfterMs,
    }
    return { state: allowed && cost > 0 ? kept : state, decision }
  },

  expiresAtMs(state, policy) {
    return fullResetAtMs(state, policy.periodMs, state.windowStartMs)
  },
}
