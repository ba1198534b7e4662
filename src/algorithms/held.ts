/**
 * @module algorithms/held
 * The tokens (or GCRA slots) lessees hold (leased quotas): how many, and until when. Kept as a
 * short list of `[untilMs, units]`, earliest first, holds lapsing within one grain of each other
 * merged into the later one (which only keeps them counted a little longer). Pure.
 */

/** `[untilMs, units]` pairs, earliest first. */
export type Held = readonly (readonly [number, number])[]

/** Holds that lapse within this much of each other share an entry (ms). */
export const HELD_GRAIN_MS = 250

/**
 * The units held, in all.
 *
 * @param held - the holds
 */
export function heldUnits(held: Held | undefined): number {
  let units = 0
  for (const [, n] of held ?? []) units += n
  return units
}

/**
 * Adds a hold, rounded up to the grain.
 *
 * @param held - the holds
 * @param untilMs - when the lessee must have spent the units
 * @param units - how many
 */
export function addHeld(held: Held | undefined, untilMs: number, units: number): Held {
  const atMs = Math.ceil(untilMs / HELD_GRAIN_MS) * HELD_GRAIN_MS
  const list = [...(held ?? [])]
  const at = list.findIndex(([entryMs]) => entryMs >= atMs)
  if (at >= 0 && list[at]![0] === atMs) list[at] = [atMs, list[at]![1] + units]
  else list.splice(at < 0 ? list.length : at, 0, [atMs, units])
  return list
}

/**
 * Takes back up to `units` from the hold that lapses at `untilMs` (rounded as when added).
 *
 * @param held - the holds
 * @param untilMs - the lapse time the units were granted with
 * @param units - how many are handed back
 * @returns the holds left and how many were taken back (0 once the hold has lapsed)
 */
export function releaseHeld(
  held: Held | undefined,
  untilMs: number,
  units: number
): { held: Held | undefined; released: number } {
  const atMs = Math.ceil(untilMs / HELD_GRAIN_MS) * HELD_GRAIN_MS
  const at = (held ?? []).findIndex(([entryMs]) => entryMs === atMs)
  if (!held || at < 0) return { held, released: 0 }
  const released = Math.min(units, held[at]![1])
  const list = [...held]
  if (released >= list[at]![1]) list.splice(at, 1)
  else list[at] = [atMs, list[at]![1] - released]
  return { held: list.length > 0 ? list : undefined, released }
}

/**
 * Drops the holds that lapsed by `nowMs`, calling `lapse` for each in time order with the units
 * still held until it lapsed (its own included), so a bucket can refill up to the right cap in
 * each stretch.
 *
 * @param held - the holds
 * @param nowMs - now
 * @param lapse - called as each hold lapses
 * @returns the holds still in force, or `undefined` for none
 */
export function lapseHeld(
  held: Held | undefined,
  nowMs: number,
  lapse: (atMs: number, stillHeld: number) => void
): Held | undefined {
  if (!held) return undefined
  let still = heldUnits(held)
  let first = 0
  for (const [atMs, units] of held) {
    if (atMs > nowMs) break
    lapse(atMs, still)
    still -= units
    first++
  }
  return first === held.length ? undefined : first === 0 ? held : held.slice(first)
}
