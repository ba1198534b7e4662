/**
 * @module tools/scale/judge
 * Holds the run against exact limits. Decisions arrive as the isolates take them, not in order
 * of decision time (an object's decision reaches its isolate a network delay later), so they are
 * held per millisecond and judged in time order once no earlier one can still come (`flush`).
 * At each millisecond the admissions are charged to the exact limit first (over-admissions are
 * those that do not fit). Then the denials: a second exact limit, charged with every admission
 * and with every early denial, says which were early: a denial that fits in it would have been
 * admitted, and takes its room, so that room left in a window is counted once, not again at
 * every later denial. Beside them, an ideal limiter fed every request as it arrives says what
 * the limit would have admitted. Each of the three is the run's {@link Bounds}: its tiers' and
 * its rule versions' exact limits.
 */
import type { Bounds } from './bounds'

/** Counts by second (or by 100 ms, `admittedPerTick`) from the start of the run. */
export class Judge {
  readonly #oracle: Bounds
  /** The exact limit charged with admissions and early denials. */
  readonly #shadow: Bounds
  readonly #ideal: Bounds
  readonly #startMs: number
  readonly #periodMs: number
  /** Per tier, admissions and denials of cost 1 per ms. */
  readonly #admittedOnes: Int32Array[]
  readonly #deniedOnes: Int32Array[]
  readonly #others = new Map<number, { admitted: Cost[]; denied: Cost[] }>()
  #flushedMs = 0
  readonly #windows = new Map<number, number>()

  /** Admissions the exact limit refuses. */
  overAdmitted = 0
  /** Decisions that came after their millisecond was judged (judged at the first open one). */
  late = 0
  readonly overAdmittedPerSecond: Int32Array
  readonly earlyPerSecond: Int32Array
  readonly admittedPerSecond: Int32Array
  readonly deniedPerSecond: Int32Array
  readonly idealPerSecond: Int32Array
  /** Admitted per 100 ms (for the recovery after a shift). */
  readonly admittedPerTick: Int32Array

  /**
   * @param bounds - makes the run's bounds: those the design guarantees (the limit), and those
   *   exact mode decides by (`shared`: the shadow, the ideal)
   * @param periodMs - the rule's period (the fullest window is counted in it)
   * @param tiers - how many tiers requests carry
   * @param startMs - the run's first instant
   * @param spanMs - how long decisions may be taken (the run and its tail)
   */
  constructor(
    bounds: (shared: boolean) => Bounds,
    periodMs: number,
    tiers: number,
    startMs: number,
    spanMs: number
  ) {
    this.#oracle = bounds(false)
    this.#shadow = bounds(true)
    this.#ideal = bounds(true)
    this.#startMs = startMs
    this.#periodMs = periodMs
    this.#admittedOnes = Array.from({ length: tiers }, () => new Int32Array(spanMs))
    this.#deniedOnes = Array.from({ length: tiers }, () => new Int32Array(spanMs))
    const seconds = Math.ceil(spanMs / 1000)
    this.overAdmittedPerSecond = new Int32Array(seconds)
    this.earlyPerSecond = new Int32Array(seconds)
    this.admittedPerSecond = new Int32Array(seconds)
    this.deniedPerSecond = new Int32Array(seconds)
    this.idealPerSecond = new Int32Array(seconds)
    this.admittedPerTick = new Int32Array(seconds * 10)
  }

  /** A request arrived (fed to the ideal limiter at once: arrivals come in order). */
  arrived(atMs: number, cost: number, tier = 0): void {
    if (this.#ideal.admit(atMs, cost, tier)) this.idealPerSecond[this.#second(atMs)]! += 1
  }

  /**
   * A request was let through, decided at `atMs`; with units the root charged at `chargedAtMs`,
   * if leased. Units charged before a rule's edit took effect keep to the version then in force.
   */
  admitted(atMs: number, cost: number, tier = 0, chargedAtMs?: number): void {
    const ms = this.#slot(atMs)
    const before = chargedAtMs !== undefined && this.#oracle.chargedBefore(chargedAtMs)
    if (cost === 1 && !before) this.#admittedOnes[tier]![ms]!++
    else this.#othersAt(ms).admitted.push({ cost, tier, before })
  }

  /** A request was refused, decided at `atMs`. */
  denied(atMs: number, cost: number, tier = 0): void {
    const ms = this.#slot(atMs)
    if (cost === 1) this.#deniedOnes[tier]![ms]!++
    else this.#othersAt(ms).denied.push({ cost, tier })
  }

  /**
   * Judges every millisecond before `beforeMs`.
   *
   * @param beforeMs - an instant no decision older than which can still come
   */
  flush(beforeMs: number): void {
    const end = Math.min(this.#admittedOnes[0]!.length, beforeMs - this.#startMs)
    for (let ms = this.#flushedMs; ms < end; ms++) this.#judge(ms)
    this.#flushedMs = Math.max(this.#flushedMs, end)
  }

  /** The fullest aligned window's admitted units. */
  fullestWindow(): number {
    return Math.max(0, ...this.#windows.values())
  }

  #judge(ms: number): void {
    const atMs = this.#startMs + ms
    const second = Math.floor(ms / 1000)
    const other = this.#others.get(ms)
    let admitted = 0
    this.#admittedOnes.forEach((ones, tier) => {
      const n = ones[ms]!
      for (let i = 0; i < n; i++) this.#admit(atMs, second, 1, tier)
      admitted += n
    })
    for (const { cost, tier, before } of other?.admitted ?? [])
      this.#admit(atMs, second, cost, tier, before)
    admitted += other?.admitted.length ?? 0
    this.admittedPerSecond[second]! += admitted
    this.admittedPerTick[Math.floor(ms / 100)]! += admitted
    // A denial at an instant is judged after every admission of that instant.
    this.#deniedOnes.forEach((ones, tier) => {
      const n = ones[ms]!
      this.deniedPerSecond[second]! += n
      const early = n > 0 ? Math.min(n, this.#shadow.room(atMs, tier)) : 0
      for (let i = 0; i < early; i++) this.#shadow.admitEach(atMs, 1, tier)
      this.earlyPerSecond[second]! += early
    })
    this.deniedPerSecond[second]! += other?.denied.length ?? 0
    for (const { cost, tier } of other?.denied ?? [])
      if (this.#shadow.admitEach(atMs, cost, tier)) this.earlyPerSecond[second]!++
    this.#others.delete(ms)
  }

  #admit(atMs: number, second: number, cost: number, tier: number, before = false): void {
    this.#shadow.admitEach(atMs, cost, tier, before)
    // Not charged where it does not fit: the bound's state stays the exact algorithm's, so the
    // count is the excess itself.
    if (!this.#oracle.admitEach(atMs, cost, tier, before)) {
      this.overAdmitted++
      this.overAdmittedPerSecond[second]!++
    }
    const window = Math.floor(atMs / this.#periodMs)
    this.#windows.set(window, (this.#windows.get(window) ?? 0) + cost)
  }

  #slot(atMs: number): number {
    const ms = Math.min(this.#admittedOnes[0]!.length - 1, atMs - this.#startMs)
    if (ms >= this.#flushedMs) return ms
    this.late++
    return this.#flushedMs
  }

  #second(atMs: number): number {
    return Math.min(this.idealPerSecond.length - 1, Math.floor((atMs - this.#startMs) / 1000))
  }

  #othersAt(ms: number) {
    let other = this.#others.get(ms)
    if (!other) this.#others.set(ms, (other = { admitted: [], denied: [] }))
    return other
  }
}

/** A request of a cost other than 1, or one whose units were charged before an edit. */
interface Cost {
  cost: number
  tier: number
  before?: boolean
}
