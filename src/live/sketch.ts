/**
 * @module live/sketch
 * Space-saving heavy hitters (Metwally et al.): the most frequent items of a stream in a fixed
 * number of slots. An item outside the sketch takes the slot of the least counted one and
 * inherits its count, so a count can overstate an item's true count by at most that
 * inherited amount, and any item counted more often than `total / slots` is kept. Pure.
 */

/** One counted item. */
export interface Counted<T> {
  /** The item's identity. */
  id: string
  /** How often it was seen (an upper bound, see the module). */
  count: number
  /** What the item carries; the latest `add` wins. */
  value: T
}

/** A space-saving sketch over string ids, each carrying a value. */
export class SpaceSaving<T> {
  readonly #slots: number
  readonly #items = new Map<string, Counted<T>>()

  /** @param slots - the most items kept (e.g. 100) */
  constructor(slots: number) {
    this.#slots = slots
  }

  /**
   * Counts `id` `by` times and keeps `value` as its latest.
   *
   * @param id - the item
   * @param value - what it carries now
   * @param by - how many sightings (1 for one request; a merged count otherwise)
   */
  add(id: string, value: T, by = 1): void {
    const found = this.#items.get(id)
    if (found) {
      found.count += by
      found.value = value
      return
    }
    if (this.#items.size < this.#slots) {
      this.#items.set(id, { id, count: by, value })
      return
    }
    // Full: the least counted item gives up its slot and its count (O(slots), only for newcomers).
    let least: Counted<T> | undefined
    for (const item of this.#items.values()) if (!least || item.count < least.count) least = item
    this.#items.delete(least!.id)
    this.#items.set(id, { id, count: least!.count + by, value })
  }

  /** The items, most counted first. */
  top(): Counted<T>[] {
    return [...this.#items.values()].sort((a, b) => b.count - a.count).map((item) => ({ ...item }))
  }

  /** How many items are kept. */
  get size(): number {
    return this.#items.size
  }
}
