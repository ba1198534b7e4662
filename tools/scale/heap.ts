/**
 * @module tools/scale/heap
 * A binary min-heap of timed callbacks, ordered by time and then by the order they were added:
 * the scale simulator's event queue. Fake-timer libraries scan every timer per step, which is
 * too slow with thousands of isolates; this costs O(log n) per event.
 */

/** A callback due at `atMs`; `run` is cleared when it is cancelled. */
export interface Scheduled {
  readonly atMs: number
  readonly seq: number
  run: (() => void) | undefined
}

/** The heap. */
export class EventHeap {
  readonly #items: Scheduled[] = []

  /** Events held, cancelled ones included. */
  get size(): number {
    return this.#items.length
  }

  /** The earliest event, if any. */
  peek(): Scheduled | undefined {
    return this.#items[0]
  }

  /**
   * Adds an event.
   *
   * @param event - the event
   */
  push(event: Scheduled): void {
    const items = this.#items
    let i = items.push(event) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(event, items[parent]!)) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = event
  }

  /** Removes and returns the earliest event. */
  pop(): Scheduled | undefined {
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

function before(a: Scheduled, b: Scheduled): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq)
}
