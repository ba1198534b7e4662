/**
 * @module algorithms/sliding-window-ramp
 * A sliding window's ramp (leased quotas, see `sliding-window.ts`): the next window's units
 * spendable from a little after it begins, slot by slot, and the room each slot has.
 */
import type { SlidingWindowPolicy } from './types'

/** Slots on a next window's ramp. */
export const RAMP_SLOTS = 40

/**
 * The time between a ramp's slots (ms): slot j is spendable from (j + 1) times this after the
 * next window's start. At most 50 ms, and the ramp at most a quarter of the period; 0 (no ramp)
 * for a period under 160 ms.
 *
 * @param periodMs - the window's length
 */
export function rampStepMs(periodMs: number): number {
  return Math.floor(Math.min(50, periodMs / (4 * RAMP_SLOTS)))
}

/**
 * When a ramp's slot may be spent from: ms after its window's start.
 *
 * @param slot - the slot
 * @param periodMs - the window's length
 */
export function slotOffsetMs(slot: number, periodMs: number): number {
  return (slot + 1) * rampStepMs(periodMs)
}

/**
 * The slot of a lot spendable from `validFromMs` in the window beginning at `windowStartMs`
 * (−1 for the window's start itself).
 *
 * @param validFromMs - the lot's start
 * @param windowStartMs - its window's start
 * @param periodMs - the window's length
 */
export function slotOf(validFromMs: number, windowStartMs: number, periodMs: number): number {
  return Math.round((validFromMs - windowStartMs) / Math.max(1, rampStepMs(periodMs))) - 1
}

/**
 * The ramp with up to `units` taken back from `slot`, or `undefined` when that slot holds none.
 *
 * @param ramp - units by slot
 * @param slot - the slot
 * @param units - units handed back
 */
export function withoutUnits(
  ramp: readonly number[] | undefined,
  slot: number,
  units: number
): number[] | undefined {
  const held = ramp?.[slot] ?? 0
  if (!(held > 0)) return undefined
  const kept = [...ramp!]
  kept[slot] = Math.max(0, held - units)
  return kept
}

/**
 * The most units the ramp may add at `slot` (every later slot's count includes them) with
 * `next` units at the window's start: what keeps each slot's count by its time within
 * (limit − next) × s_j / period. Negative when the ramp is already past that (a grown `next`).
 *
 * @param ramp - the next window's ramp, units by slot
 * @param policy - its limit
 * @param next - units charged at the next window's start
 * @param slot - the slot to charge
 */
export function rampRoom(
  ramp: readonly number[] | undefined,
  policy: SlidingWindowPolicy,
  next: number,
  slot: number
): number {
  const share = ((policy.limit - next) * rampStepMs(policy.periodMs)) / policy.periodMs
  let room = Number.POSITIVE_INFINITY
  let count = 0
  for (let j = 0; j < RAMP_SLOTS; j++) {
    count += ramp?.[j] ?? 0
    if (j >= slot) room = Math.min(room, share * (j + 1) - count)
  }
  return room
}

/**
 * The most `next` may grow to with the ramp as it is: each slot's count within its share.
 *
 * @param ramp - the next window's ramp, units by slot
 * @param policy - its limit
 */
export function nextRoom(ramp: readonly number[] | undefined, policy: SlidingWindowPolicy): number {
  const stepMs = rampStepMs(policy.periodMs)
  let most = policy.limit
  let count = 0
  for (let j = 0; j < (ramp?.length ?? 0); j++) {
    count += ramp![j] ?? 0
    if (count > 0)
      most = Math.min(most, policy.limit - (count * policy.periodMs) / ((j + 1) * stepMs))
  }
  return most
}

/**
 * The units of a ramp's slots (0 for none).
 *
 * @param slots - units by slot
 */
export function sum(slots: readonly number[] | undefined): number {
  let units = 0
  for (const slot of slots ?? []) units += slot
  return units
}
