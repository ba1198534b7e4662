/**
 * @module limiter/lessees
 * Who a lessor (a key's root object, or a location's object) has heard from lately: how many
 * lessees it serves sets how long their batches should last (`lease-sizing.ts`).
 */

/** A lessee unheard of this long no longer counts (ms). */
export const LESSEE_TTL_MS = 10_000

/** Lessees remembered at most (the oldest forgotten first). */
const MAX_LESSEES = 10_000

/** The lessees a lessor has heard from, the most recent last. */
export class Lessees {
  readonly #seen = new Map<string, number>()

  /**
   * Notes a call from a lessee.
   *
   * @param id - the lessee
   * @param nowMs - now
   */
  note(id: string, nowMs: number): void {
    this.#seen.delete(id)
    this.#seen.set(id, nowMs)
    if (this.#seen.size > MAX_LESSEES) this.#seen.delete(this.#seen.keys().next().value!)
  }

  /**
   * How many lessees were heard from within {@link LESSEE_TTL_MS}.
   *
   * @param nowMs - now
   */
  count(nowMs: number): number {
    for (const [id, seenMs] of this.#seen) {
      if (nowMs - seenMs < LESSEE_TTL_MS) break
      this.#seen.delete(id)
    }
    return this.#seen.size
  }
}
