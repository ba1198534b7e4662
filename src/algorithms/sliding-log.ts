/**
 * @module algorithms/sliding-log
 * Sliding window log: the exact algorithm. It keeps the time and cost of every unit admitted in
 * the last `period`, and admits a request when those plus its cost stay within `limit`.
 *
 * **Pro:** exact: in no window of length `period` are more than `limit` units admitted.
 * **Con:** state grows with the limit: one entry per admitted request still in the window (at
 * most `limit` entries; rules cap `limit` at {@link MAX_SLIDING_LOG_LIMIT}).
 */
import type { Decision } from '../types'
import type { Algorithm, SlidingLogPolicy } from './types'

/** The largest limit a sliding log may have, which bounds its state per key. */
export const MAX_SLIDING_LOG_LIMIT = 10_000

/** Admitted units still in the window, oldest first: `[atMs, cost]`. */
export interface SlidingLogState {
  entries: [atMs: number, cost: number][]
}

/** The sliding window log. */
export const slidingLog: Algorithm<SlidingLogPolicy, SlidingLogState> = {
  charge(state, policy, nowMs, cost) {
    const last = state?.entries.at(-1)?.[0] ?? Number.NEGATIVE_INFINITY
    // A clock that went back is read as no time passing.
    const atMs = Math.max(nowMs, last)
    const live = (state?.entries ?? []).filter(([t]) => t > atMs - policy.periodMs)
    const used = live.reduce((sum, [, units]) => sum + units, 0)
    const allowed = used + cost <= policy.limit
    const kept = allowed && cost > 0 ? [...live, [atMs, cost] as [number, number]] : live
    const usedAfter = allowed ? used + cost : used
    const lastKept = kept.at(-1)?.[0]
    const decision: Decision = {
      allowed,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - usedAfter),
      resetAtMs: lastKept === undefined ? atMs : lastKept + policy.periodMs,
      retryAfterMs: allowed ? 0 : retryAfter(live, used + cost - policy.limit, policy, atMs),
    }
    // Entries that slid out are dropped with the next write; a denial writes nothing.
    return { state: allowed && cost > 0 ? { entries: kept } : state, decision }
  },

  expiresAtMs(state, policy) {
    return (state.entries.at(-1)?.[0] ?? 0) + policy.periodMs
  },
}

/** Ms until enough of the oldest entries leave the window to free `excess` units. */
function retryAfter(
  live: [number, number][],
  excess: number,
  policy: SlidingLogPolicy,
  atMs: number
): number {
  let freed = 0
  for (const [t, units] of live) {
    freed += units
    if (freed >= excess) return Math.max(1, t + policy.periodMs - atMs)
  }
  // More than the limit was asked for: it never fits; point at an empty window.
  const newest = live.at(-1)?.[0] ?? atMs
  return Math.max(1, newest + policy.periodMs - atMs)
}
