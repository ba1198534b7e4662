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
 * They may also charge the next window's *ramp* (`ramp`): units spendable from a little after
 * it begins, slot j from s_j = (j + 1) × step on. At s_j the estimate is at most
 * current × (1 − s_j/period) + next + ramp_0..j, and the current window's count ends at most at
 * limit − next, so a ramp whose units by each s_j stay within (limit − next) × s_j/period
 * never exceeds the limit, and never takes room from the current window: it is the room the
 * previous window's sliding out gives back at the next window's start, handed out before it
 * begins. Once the next window begins, its ramp's slots are units spendable *later* in it.
 *
 * Units spendable later in the current window (`later`: the ramp's once its window began, and
 * units charged while the key is short for a time still to come, so that the room the previous
 * window's sliding out gives back then reaches the lessee before it is there) count in the
 * estimate from their time on, and in the window's count in full. A charge must fit under the
 * estimate now and at each later entry's time still to come; once their time has come they
 * are part of `current`.
 *
 * **Pro:** three numbers of state, O(1), no boundary burst of 2× like a fixed window.
 * **Con:** approximate: a previous window whose traffic was bunched at its end is under-counted.
 */
import type { Decision } from '../types'
import {
  nextRoom,
  RAMP_SLOTS,
  rampRoom,
  rampStepMs,
  slotOf,
  slotOffsetMs,
  sum,
  withoutUnits,
} from './sliding-window-ramp'
import { ceilMs, EPSILON, type Algorithm, type Outcome, type SlidingWindowPolicy } from './types'

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
  /** Units charged on the next window's ramp, by slot (see {@link rampStepMs}), if any. */
  ramp?: number[]
  /**
   * Units of this window spendable only from a later time in it (its ramp, charged before it
   * began; units charged ahead while the key is short), the soonest first: each counts in the
   * estimate from its time on (`current` counts from the start), and in the window's count in
   * full.
   */
  later?: LaterUnits[]
  /** A stored state of an earlier version: this window's ramp by slot (read as `later`). */
  rampNow?: number[]
}

/** Units of the current window spendable from `fromMs` on. */
export interface LaterUnits {
  fromMs: number
  units: number
}

/** The units charged ahead for the next window: at its start and on its ramp. */
function aheadOf(state: SlidingWindowState): number {
  return (state.next ?? 0) + sum(state.ramp)
}

/** The units charged to the current window: from its start, and for later in it. */
function countOf(state: SlidingWindowState): number {
  let count = state.current
  for (const entry of state.later ?? []) count += entry.units
  return count
}

/** The state with the entries of `later` whose time has come (by `atMs`) counted in `current`. */
function matured(state: SlidingWindowState, atMs: number): SlidingWindowState {
  const later = state.later
  if (!later || later[0]!.fromMs > atMs) return state
  let current = state.current
  let j = 0
  for (; j < later.length && later[j]!.fromMs <= atMs; j++) current += later[j]!.units
  const kept: SlidingWindowState = { ...state, current, later: later.slice(j) }
  if (kept.later!.length === 0) delete kept.later
  return kept
}

/** A ramp by slot as later units of the window beginning at `windowStartMs`. */
function rampAsLater(ramp: readonly number[], windowStartMs: number, periodMs: number) {
  const later: LaterUnits[] = []
  ramp.forEach((units, j) => {
    if (units > 0) later.push({ fromMs: windowStartMs + slotOffsetMs(j, periodMs), units })
  })
  return later
}

/** Rolls the state forward to the window containing `nowMs`; a clock that went back keeps it. */
function advance(
  state: SlidingWindowState | undefined,
  periodMs: number,
  nowMs: number
): SlidingWindowState {
  const windowStartMs = Math.floor(nowMs / periodMs) * periodMs
  if (!state) return { windowStartMs, current: 0, previous: 0 }
  if (state.rampNow) {
    const { rampNow, ...rest } = state
    const later = rampAsLater(rampNow, state.windowStartMs, periodMs)
    state = later.length > 0 ? { ...rest, later } : rest
  }
  if (windowStartMs <= state.windowStartMs) return matured(state, nowMs)
  const steps = (windowStartMs - state.windowStartMs) / periodMs
  // Units charged ahead belong to the window after the stored one: its count, its ramp's from
  // each slot's time on.
  if (steps === 1) {
    const rolled: SlidingWindowState = {
      windowStartMs,
      current: state.next ?? 0,
      previous: countOf(state),
    }
    const later = state.ramp ? rampAsLater(state.ramp, windowStartMs, periodMs) : []
    if (later.length > 0) rolled.later = later
    return matured(rolled, nowMs)
  }
  return { windowStartMs, current: 0, previous: steps === 2 ? aheadOf(state) : 0 }
}

/**
 * The highest estimate from `atMs` on in this window: then, or as a later entry comes in (the
 * previous window slides out in between). Units counted from `atMs` must fit under all of them.
 */
function peakFrom(state: SlidingWindowState, periodMs: number, atMs: number): number {
  const at = (timeMs: number, count: number) =>
    (state.previous * (periodMs - (timeMs - state.windowStartMs))) / periodMs + count
  const later = state.later ?? []
  let count = state.current
  let j = 0
  for (; j < later.length && later[j]!.fromMs <= atMs; j++) count += later[j]!.units
  let peak = at(atMs, count)
  for (; j < later.length; j++) {
    count += later[j]!.units
    peak = Math.max(peak, at(later[j]!.fromMs, count))
  }
  return peak
}

/**
 * What the current window is still likely to be charged: its pace so far, for the rest of it.
 * Units charged at the next window's start share the limit with this window's count, so only
 * what this window will not use goes there; the rest of the next window's start comes from its
 * ramp, which takes nothing from this one.
 */
function restOf(state: SlidingWindowState, periodMs: number, atMs: number): number {
  const elapsedMs = Math.max(1, atMs - state.windowStartMs)
  return (countOf(state) * Math.max(0, periodMs - elapsedMs)) / elapsedMs
}

/** When the estimate drops to 0 again, i.e. every counted unit has slid out. */
function fullResetAtMs(state: SlidingWindowState, periodMs: number, atMs: number): number {
  if (aheadOf(state) > 0) return state.windowStartMs + 3 * periodMs
  if (countOf(state) > 0) return state.windowStartMs + 2 * periodMs
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
  const count = countOf(state)
  if (count <= room + EPSILON) {
    const share = 1 - (room - count) / state.previous
    return state.windowStartMs + ceilMs(periodMs * share)
  }
  const share = 1 - room / count
  return state.windowStartMs + periodMs + ceilMs(periodMs * share)
}

/** The sliding-window counter. */
export const slidingWindow: Algorithm<SlidingWindowPolicy, SlidingWindowState> = {
  pendingUnits(state, policy, nowMs) {
    const current = advance(state, policy.periodMs, nowMs)
    return aheadOf(current) + countOf(current) - current.current
  },

  charge(state, policy, nowMs, cost, hold) {
    const current = advance(state, policy.periodMs, nowMs)
    // A clock that moved backwards is read as "no time has passed".
    const atMs = Math.max(nowMs, current.windowStartMs)
    if (hold?.rampSlot !== undefined)
      return onRamp(state, current, policy, atMs, cost, hold.rampSlot)
    if (hold?.fromMs !== undefined) return onLater(state, current, policy, atMs, cost, hold.fromMs)
    const ahead = current.next ?? 0
    const count = countOf(current)
    const before = peakFrom(current, policy.periodMs, atMs)
    // Charged ahead, the units count in the next window, where today's count is the previous;
    // its ramp then holds only while each slot stays within its share of what `next` leaves.
    const allowed = hold?.ahead
      ? count + ahead + cost + restOf(current, policy.periodMs, atMs) <= policy.limit + EPSILON &&
        rampRoom(current.ramp, policy, ahead + cost, 0) >= -EPSILON
      : before + cost <= policy.limit + EPSILON && count + ahead + cost <= policy.limit + EPSILON
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
              ahead > 0 && count + ahead + cost > policy.limit + EPSILON
                ? current.windowStartMs + policy.periodMs - atMs
                : 0
            )
    }
    // The current window's count and the next one's start share the limit; looking ahead,
    // the next window's start also leaves its ramp each slot's share.
    const shared = policy.limit - countOf(kept) - (kept.next ?? 0)
    const left = hold?.ahead
      ? Math.min(
          shared - restOf(kept, policy.periodMs, atMs),
          nextRoom(kept.ramp, policy) - (kept.next ?? 0)
        )
      : Math.min(policy.limit - peakFrom(kept, policy.periodMs, atMs), shared)
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
    if (windowStartMs === current.windowStartMs) return refundNow(current, nowMs, units, lot)
    // Units of the window just ended that lapsed unspent: the previous count is then what was
    // admitted in it, as for a key that never reserved them, and their weight is room again.
    if (windowStartMs === current.windowStartMs - policy.periodMs && current.previous > 0)
      return { ...current, previous: Math.max(0, current.previous - units) }
    // Of a later window, they are `next` or its ramp's; of an older one, they no longer count.
    if (windowStartMs !== current.windowStartMs + policy.periodMs) return state
    if (lot.validFromMs > windowStartMs) {
      // A ramp's slot: from it alone (as `next`, they would make room before the slot's time).
      const slot = slotOf(lot.validFromMs, windowStartMs, policy.periodMs)
      const ramp = withoutUnits(current.ramp, slot, units)
      return ramp ? { ...current, ramp } : state
    }
    const ahead = current.next ?? 0
    return ahead > 0 ? { ...current, next: Math.max(0, ahead - units) } : state
  },
}

/**
 * Takes back units of the current window. Units spendable later, whose time has not come, are
 * taken back from that entry alone: counted from the window's start instead, they would make
 * room now that was never there. Other units come off the count as it is now.
 */
function refundNow(
  state: SlidingWindowState,
  nowMs: number,
  units: number,
  lot: { validFromMs: number }
): SlidingWindowState {
  if (lot.validFromMs > nowMs) {
    const later = state.later ?? []
    const at = later.findIndex((entry) => entry.fromMs === lot.validFromMs)
    if (at < 0) return state
    const kept = [...later]
    kept[at] = { fromMs: lot.validFromMs, units: Math.max(0, later[at]!.units - units) }
    return { ...state, later: kept }
  }
  const current = Math.max(0, state.current - units)
  return current === state.current ? state : { ...state, current }
}

/**
 * Charges `cost` units spendable from `fromMs` (later in the current window), within what the
 * estimate leaves then and at each later entry's time. The decision's `remaining` is that room
 * (after the charge).
 */
function onLater(
  state: SlidingWindowState | undefined,
  current: SlidingWindowState,
  policy: SlidingWindowPolicy,
  atMs: number,
  cost: number,
  fromMs: number
): Outcome<SlidingWindowState> {
  const { limit, periodMs } = policy
  const inWindow = fromMs > atMs && fromMs < current.windowStartMs + periodMs
  const shared = limit - countOf(current) - (current.next ?? 0)
  const room = inWindow ? Math.min(limit - peakFrom(current, periodMs, fromMs), shared) : 0
  const allowed = inWindow && cost <= room + EPSILON
  let kept = current
  if (allowed && cost > 0) {
    const later = [...(current.later ?? [])]
    const at = later.findIndex((entry) => entry.fromMs >= fromMs)
    if (at >= 0 && later[at]!.fromMs === fromMs)
      later[at] = { fromMs, units: later[at]!.units + cost }
    else later.splice(at < 0 ? later.length : at, 0, { fromMs, units: cost })
    kept = { ...current, later }
  }
  const decision: Decision = {
    allowed,
    limit,
    remaining: Math.max(0, Math.floor((allowed ? room - cost : room) + EPSILON)),
    resetAtMs: fullResetAtMs(kept, periodMs, atMs),
    retryAfterMs: allowed ? 0 : Math.max(1, current.windowStartMs + periodMs - atMs),
  }
  return { state: allowed && cost > 0 ? kept : state, decision }
}

/**
 * Charges `cost` units on the next window's ramp at `slot`, within the room the slot's share
 * leaves ({@link rampRoom}). The decision's `remaining` is that room (after the charge).
 */
function onRamp(
  state: SlidingWindowState | undefined,
  current: SlidingWindowState,
  policy: SlidingWindowPolicy,
  atMs: number,
  cost: number,
  slot: number
): Outcome<SlidingWindowState> {
  const room =
    rampStepMs(policy.periodMs) > 0 ? rampRoom(current.ramp, policy, current.next ?? 0, slot) : 0
  const allowed = slot >= 0 && slot < RAMP_SLOTS && cost <= room + EPSILON
  let kept = current
  if (allowed && cost > 0) {
    const ramp = current.ramp ? [...current.ramp] : new Array<number>(RAMP_SLOTS).fill(0)
    ramp[slot] = (ramp[slot] ?? 0) + cost
    kept = { ...current, ramp }
  }
  const decision: Decision = {
    allowed,
    limit: policy.limit,
    remaining: Math.max(0, Math.floor((allowed ? room - cost : room) + EPSILON)),
    resetAtMs: fullResetAtMs(kept, policy.periodMs, atMs),
    retryAfterMs: allowed ? 0 : Math.max(1, current.windowStartMs + policy.periodMs - atMs),
  }
  return { state: allowed && cost > 0 ? kept : state, decision }
}
