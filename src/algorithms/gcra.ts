/**
 * @module algorithms/gcra
 * Generic cell rate algorithm (virtual scheduling). One number of state: the theoretical arrival
 * time (TAT) of the next request if requests came exactly at the rate. With emission interval
 * `T = period / limit`, a request of `cost` is admitted when `max(TAT, now) + cost·T − now` stays
 * within `burst·T`; admitting moves the TAT forward by `cost·T`.
 *
 * Leased quotas take slots for lessees to spend until a time (`held`), as the token bucket
 * does: while they are held the TAT never falls below now plus their emission time.
 *
 * **Pro:** a single timestamp per key; the exact long-run rate, with `burst` as the tolerance.
 * **Con:** the same shape as a token bucket (it is one, stored differently); less familiar to read.
 */
import type { Decision } from '../types'
import { addHeld, heldUnits, lapseHeld, releaseHeld, type Held } from './held'
import { ceilMs, EPSILON, type Algorithm, type GcraPolicy } from './types'

/** The theoretical arrival time. */
export interface GcraState {
  tatMs: number
  /** Slots lessees hold, by when they lapse (leased quotas), if any. */
  held?: Held
}

/**
 * The state at `nowMs`: held slots that lapsed dropped, and the TAT no earlier than now plus
 * the emission time of the slots held in each stretch (so held slots count as taken).
 */
export function settle(state: GcraState | undefined, policy: GcraPolicy, nowMs: number): GcraState {
  const interval = policy.periodMs / policy.limit
  let tatMs = Math.max(state?.tatMs ?? nowMs, nowMs)
  const held = lapseHeld(state?.held, nowMs, (atMs, stillHeld) => {
    tatMs = Math.max(tatMs, atMs + stillHeld * interval)
  })
  tatMs = Math.max(tatMs, nowMs + heldUnits(held) * interval)
  return held ? { tatMs, held } : { tatMs }
}

/** GCRA. */
export const gcra: Algorithm<GcraPolicy, GcraState> = {
  charge(state, policy, nowMs, cost, hold) {
    const interval = policy.periodMs / policy.limit
    const capacity = policy.burst * interval
    const settled = settle(state, policy, nowMs)
    const tat = settled.tatMs
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
    const held =
      hold?.untilMs === undefined ? settled.held : addHeld(settled.held, hold.untilMs, cost)
    const taken = held ? { tatMs: next, held } : { tatMs: next }
    return { state: allowed && cost > 0 ? taken : state, decision }
  },

  expiresAtMs(state) {
    // Slots held until later keep the TAT at least that far ahead.
    return Math.ceil(Math.max(state.tatMs, ...(state.held ?? []).map(([atMs]) => atMs)))
  },

  refund(state, policy, nowMs, units, lot) {
    const settled = settle(state, policy, nowMs)
    // Only slots still held come back: a lapsed hold's slots count as spent.
    const { held, released } = releaseHeld(settled.held, lot.validUntilMs, units)
    if (released === 0) return state
    const interval = policy.periodMs / policy.limit
    const tatMs = Math.max(nowMs + heldUnits(held) * interval, settled.tatMs - released * interval)
    return held ? { tatMs, held } : { tatMs }
  },

  spent(state, policy, nowMs, units, lot) {
    const settled = settle(state, policy, nowMs)
    // The TAT stays: the slots were taken when granted, and spent they stay taken.
    const { held, released } = releaseHeld(settled.held, lot.validUntilMs, units)
    if (released === 0) return state
    return held ? { tatMs: settled.tatMs, held } : { tatMs: settled.tatMs }
  },
}
