/**
 * @module limiter/lessees
 * Who a lessor (a key's root object, or a location's object) has heard from lately: how many
 * lessees it serves sets how long their batches should last (`lease-sizing.ts`).
 */

/** A lessee unheard of this long no longer counts (ms). */
const LESSEE_TTL_MS = 10_000

/**
 * A lessee's demand counts this long after its last call (ms): a busy lessee calls at least
 * once per horizon (at most 2 s at a location), and a dead one's demand is gone soon after.
 */
export const RATE_TTL_MS = 4_000

/** Lessees remembered at most (the oldest forgotten first). */
const MAX_LESSEES = 10_000

/** When a lessee last called, and the demand it said it had. */
interface Seen {
  atMs: number
  ratePerMs: number | undefined
}

/** The lessees a lessor has heard from, the most recent last. */
export class Lessees {
  readonly #seen = new Map<string, Seen>()

  /**
   * Notes a call from a lessee.
   *
   * @param id - the lessee
   * @param nowMs - now
   * @param ratePerMs - the demand it said it has (units per ms), if it did
   */
  note(id: string, nowMs: number, ratePerMs?: number): void {
    this.#seen.delete(id)
    this.#seen.set(id, { atMs: nowMs, ratePerMs })
    if (this.#seen.size > MAX_LESSEES) this.#seen.delete(this.#seen.keys().next().value!)
  }

  /**
   * The demand of the lessees heard from within {@link RATE_TTL_MS} that said theirs (units per
   * ms), or `undefined` when none did: a lessor that is itself a lessee sizes its asks by it.
   * What its lessees consume, not what they ask for: asks run ahead of use, and overlap.
   *
   * @param nowMs - now
   */
  ratePerMs(nowMs: number): number | undefined {
    return this.#reported(nowMs)?.sum
  }

  /**
   * The mean demand of the lessees heard from within {@link RATE_TTL_MS} that said theirs
   * (units per ms), or `undefined` when none did: what a new lessee is likely to have.
   *
   * @param nowMs - now
   */
  meanRatePerMs(nowMs: number): number | undefined {
    const reported = this.#reported(nowMs)
    return reported && reported.sum / reported.count
  }

  /**
   * The demand of the lessees heard from within {@link RATE_TTL_MS}, those that said none yet
   * counted at the mean of those that did (units per ms), or `undefined` when none did. Just
   * after a deploy every isolate asks before it measured its demand: summed as 0, they would
   * have their lessor ask the root for a few units, then for more each time they come back.
   *
   * @param nowMs - now
   */
  expectedRatePerMs(nowMs: number): number | undefined {
    const reported = this.#reported(nowMs)
    return reported && (reported.sum * reported.heard) / reported.count
  }

  #reported(nowMs: number): { sum: number; count: number; heard: number } | undefined {
    let sum = 0
    let count = 0
    let heard = 0
    for (const seen of this.#seen.values()) {
      if (nowMs - seen.atMs >= RATE_TTL_MS) continue
      heard++
      if (seen.ratePerMs === undefined) continue
      sum += seen.ratePerMs
      count++
    }
    return count > 0 ? { sum, count, heard } : undefined
  }

  /**
   * How many lessees were heard from within {@link LESSEE_TTL_MS}.
   *
   * @param nowMs - now
   */
  count(nowMs: number): number {
    for (const [id, seen] of this.#seen) {
      if (nowMs - seen.atMs < LESSEE_TTL_MS) break
      this.#seen.delete(id)
    }
    return this.#seen.size
  }
}
