/**
 * @module tools/scale/heap
 * A binary min-heap of timed items, ordered by time and then by a sequence number: the scale
 * simulator's event queue, and the rehearsal's reordering of recorded requests. Fake-timer
 * libraries scan every timer per step, which is too slow with thousands of isolates; this costs
 * O(log n) per item.
 */

/** What the heap orders by: time, then `seq` (the order added, or any other tie-break). */
export interface Timed {
  readonly atMs: number
  readonly seq: number
}

/** A callback due at `atMs`; `run` is cleared when it is cancelled. */
export interface Scheduled extends Timed {
  run: (() => void) | undefined
}

/** The heap. */
export class TimedHeap<T extends Timed> {
  readonly #items: T[] = []

  /** Items held (for events, cancelled ones included). */
  get size(): number {
    return this.#items.length
  }

  /** The earliest item, if any. */
  peek(): T | undefined {
    return this.#items[0]
  }

  /**
   * Adds an item.
   *
   * @param item - the item
   */
  push(item: T): void {
    const items = this.#items
    let i = items.push(item) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(item, items[parent]!)) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = item
  }

  /** Removes and returns the earliest item. */
  pop(): T | undefined {
    const items = this.#items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    const n = items.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && before(items[right]!, items[left]!) ? right : left
      if (!before(items[child]!, last)) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}

/** The scale simulator's event queue. */
export class EventHeap extends TimedHeap<Scheduled> {}

function before(a: Timed, b: Timed): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq)
}
