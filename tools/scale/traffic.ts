/**
 * @module tools/scale/traffic
 * Request arrivals: a Poisson process whose rate and spread over locations a scenario sets, step
 * by step (constant within a step). A request's location is drawn by the step's weights.
 */
import { AliasTable, exponential, type Random } from './random'

/** The demand during one step. */
export interface Demand {
  /** Requests per ms, all locations together. */
  ratePerMs: number
  /** Share of the requests per location (need not add up to 1). */
  weights: readonly number[]
}

/** Arrivals over `[0, endMs)`, ms from the start of the run. */
export class Arrivals {
  readonly #demandAt: (tMs: number) => Demand
  readonly #random: Random
  readonly #stepMs: number
  readonly #endMs: number
  #stepEndMs = 0
  #ratePerMs = 0
  #table: AliasTable | undefined
  #lastWeights: readonly number[] | undefined
  /** When the next request arrives (ms, fractional); `Infinity` once past the end. */
  nextMs = 0

  /**
   * @param demandAt - the demand of the step starting at `tMs`
   * @param random - the stream for gaps and locations
   * @param endMs - when arrivals stop
   * @param stepMs - how often the demand is read
   */
  constructor(demandAt: (tMs: number) => Demand, random: Random, endMs: number, stepMs = 100) {
    this.#demandAt = demandAt
    this.#random = random
    this.#endMs = endMs
    this.#stepMs = stepMs
    this.#enterStep(0)
    this.#advance(0)
  }

  /** The next request's location; moves on to the one after. */
  take(): number {
    const location = this.#table!.draw(this.#random)
    this.#advance(this.nextMs)
    return location
  }

  /** The demand now (what new isolates follow). */
  get weights(): readonly number[] {
    return this.#lastWeights ?? []
  }

  /** Finds the next arrival after `fromMs`, crossing steps (the process is memoryless). */
  #advance(fromMs: number): void {
    let t = fromMs
    for (;;) {
      if (t >= this.#endMs) {
        this.nextMs = Number.POSITIVE_INFINITY
        return
      }
      const next =
        this.#ratePerMs > 0 ? t + exponential(this.#random, 1 / this.#ratePerMs) : Infinity
      if (next < this.#stepEndMs) {
        this.nextMs = next
        return
      }
      t = this.#stepEndMs
      this.#enterStep(t)
    }
  }

  #enterStep(startMs: number): void {
    const demand = this.#demandAt(startMs)
    this.#stepEndMs = startMs + this.#stepMs
    this.#ratePerMs = demand.ratePerMs
    if (demand.weights !== this.#lastWeights) {
      this.#lastWeights = demand.weights
      this.#table = new AliasTable(demand.weights)
    }
  }
}
