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
 * Leased quotas may charge units ahead for the next window (`next`), spent only once it
 * begins: the current window's count plus them stays within the limit, so the estimate at the
 * next window's start does too, whatever the current window still admits.
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
  /** Units charged ahead for the window after the current one (leased quotas), if any. */
  next?: number
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
  const steps = (windowStartMs - state.windowStartMs) / periodMs
  // Units charged ahead belong to the window after the stored one: its count.
  const ahead = state.next ?? 0
  if (steps === 1) return { windowStartMs, current: ahead, previous: state.current }
  return { windowStartMs, current: 0, previous: steps === 2 ? ahead : 0 }
}

/** The weighted count over the sliding window ending at `atMs`. */
function estimate(state: SlidingWindowState, periodMs: number, atMs: number): number {
  const elapsedMs = atMs - state.windowStartMs
  return (state.previous * (periodMs - elapsedMs)) / periodMs + state.current
}

/** When the estimate drops to 0 again, i.e. every counted unit has slid out. */
function fullResetAtMs(state: SlidingWindowState, periodMs: number, atMs: number): number {
  if ((state.next ?? 0) > 0) return state.windowStartMs + 3 * periodMs
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
  charge(state, policy, nowMs, cost, hold) {
    const current = advance(state, policy.periodMs, nowMs)
    // A clock that moved backwards is read as "no time has passed".
    const atMs = Math.max(nowMs, current.windowStartMs)
    const ahead = current.next ?? 0
    const before = estimate(current, policy.periodMs, atMs)
    // Charged ahead, the units count in the next window, where today's count is the previous.
    const allowed = hold?.ahead
      ? current.current + ahead + cost <= policy.limit + EPSILON
      : before + cost <= policy.limit + EPSILON &&
        current.current + ahead + cost <= policy.limit + EPSILON
    const kept =
      allowed && cost > 0
        ? hold?.ahead
          ? { ...current, next: ahead + cost }
          : { ...current, current: current.current + cost }
        : current
    const resetAtMs = fullResetAtMs(kept, policy.periodMs, atMs)
    let retryAfterMs = 0
    if (!allowed) {
      // A cost above the limit never fits; point at the full reset, the best there is. Units
      // charged ahead leave the count only when their window has become the previous one.
      retryAfterMs =
        cost > policy.limit
          ? Math.max(1, resetAtMs - atMs)
          : Math.max(
              1,
              allowedAtMs(current, policy, cost) - atMs,
              ahead > 0 && current.current + ahead + cost > policy.limit + EPSILON
                ? current.windowStartMs + policy.periodMs - atMs
                : 0
            )
    }
    // Looking ahead, what is left is what the next window can still be charged.
    const aheadLeft = policy.limit - kept.current - (kept.next ?? 0)
    const left = hold?.ahead
      ? aheadLeft
      : Math.min(policy.limit - estimate(kept, policy.periodMs, atMs), aheadLeft)
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, Math.floor(left + EPSILON)),
      resetAtMs,
      retryAfterMs,
    }
    return { state: allowed && cost > 0 ? kept : state, decision }
  },

  expiresAtMs(state, policy) {
    return fullResetAtMs(state, policy.periodMs, state.windowStartMs)
  },

  refund(state, policy, nowMs, units, lot) {
    const current = advance(state, policy.periodMs, nowMs)
    const windowStartMs = Math.floor(lot.validFromMs / policy.periodMs) * policy.periodMs
    if (windowStartMs === current.windowStartMs && current.current > 0)
      return { ...current, current: Math.max(0, current.current - units) }
    // Units of the window just ended that lapsed unspent: the previous count is then what was
    // admitted in it, as for a key that never reserved them, and their weight is room again.
    if (windowStartMs === current.windowStartMs - policy.periodMs && current.previous > 0)
      return { ...current, previous: Math.max(0, current.previous - units) }
    // Of a later window, they are `next`; of an older one, they no longer count.
    const ahead = current.next ?? 0
    if (windowStartMs === current.windowStartMs + policy.periodMs && ahead > 0)
      return { ...current, next: Math.max(0, ahead - units) }
    return state
  },
}
