/**
 * @module tools/scale/random
 * Seeded randomness for the scale simulator: an independent stream per use (so that drawing
 * more in one never shifts another), exponential gaps for Poisson arrivals, and an alias table
 * that draws an index by weight in constant time.
 */
import { mulberry32 } from '../simulate/profile'

/** A seeded source of numbers in [0, 1). */
export type Random = () => number

/**
 * The stream `name` of a run seeded with `seed`.
 *
 * @param seed - the run's seed
 * @param name - what the stream is for (`traffic`, `churn`, …)
 */
export function stream(seed: number, name: string): Random {
  let hash = 0x811c9dc5 ^ seed
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193)
  return mulberry32(hash >>> 0)
}

/**
 * An exponentially distributed draw: the gap to the next arrival of a Poisson process.
 *
 * @param random - the stream
 * @param mean - the mean gap
 */
export function exponential(random: Random, mean: number): number {
  return -Math.log(1 - random()) * mean
}

/** Draws an index with probability proportional to its weight (Walker's alias method). */
export class AliasTable {
  readonly #probability: Float64Array
  readonly #alias: Int32Array

  /** @param weights - non-negative, at least one above 0 */
  constructor(weights: readonly number[]) {
    const n = weights.length
    const total = weights.reduce((a, b) => a + b, 0)
    if (!(total > 0)) throw new Error('an alias table needs a weight above 0')
    this.#probability = new Float64Array(n)
    this.#alias = new Int32Array(n)
    const scaled = weights.map((w) => (w * n) / total)
    const small: number[] = []
    const large: number[] = []
    scaled.forEach((p, i) => (p < 1 ? small : large).push(i))
    while (small.length > 0 && large.length > 0) {
      const s = small.pop()!
      const l = large.pop()!
      this.#probability[s] = scaled[s]!
      this.#alias[s] = l
      scaled[l] = scaled[l]! + scaled[s]! - 1
      ;(scaled[l]! < 1 ? small : large).push(l)
    }
    // What is left is 1 up to rounding.
    for (const i of [...small, ...large]) {
      this.#probability[i] = 1
      this.#alias[i] = i
    }
  }

  /**
   * One draw.
   *
   * @param random - the stream (one number per draw)
   */
  draw(random: Random): number {
    const u = random() * this.#probability.length
    const i = Math.floor(u)
    return u - i < this.#probability[i]! ? i : this.#alias[i]!
  }
}
