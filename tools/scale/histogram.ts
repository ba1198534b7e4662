/**
 * @module tools/scale/histogram
 * Whole-millisecond histograms, exact percentiles: one for a whole run, or one per second.
 */

/** Counts of whole-ms values; values past the last bin count in it. */
export class Histogram {
  readonly #bins: Uint32Array
  readonly #width: number
  readonly #rows: number

  /**
   * @param maxMs - the last bin (its value and all above)
   * @param rows - independent histograms (e.g. one per second)
   */
  constructor(maxMs: number, rows = 1) {
    this.#width = maxMs + 1
    this.#rows = rows
    this.#bins = new Uint32Array(this.#width * rows)
  }

  /**
   * Counts a value.
   *
   * @param ms - the value (rounded down, at least 0)
   * @param row - which histogram
   */
  add(ms: number, row = 0): void {
    const bin = Math.min(this.#width - 1, Math.max(0, Math.floor(ms)))
    this.#bins[Math.min(row, this.#rows - 1) * this.#width + bin]!++
  }

  /**
   * The smallest value with at least `q` of the counts at or below it, over rows `[from, to)`;
   * `null` when there are none.
   *
   * @param q - e.g. 0.99
   * @param from - first row
   * @param to - past the last row
   */
  quantile(q: number, from = 0, to = from + 1): number | null {
    const count = (bin: number) => {
      let n = 0
      for (let row = from; row < to; row++) n += this.#bins[row * this.#width + bin]!
      return n
    }
    const counts = Array.from({ length: this.#width }, (_, bin) => count(bin))
    const total = counts.reduce((a, b) => a + b, 0)
    if (total === 0) return null
    let seen = 0
    for (let bin = 0; bin < this.#width; bin++) {
      seen += counts[bin]!
      if (seen >= q * total) return bin
    }
    return this.#width - 1
  }
}
