/**
 * @module tools/scale/metrics
 * What a run measures, second by second: demand, decisions (latency from arrival to decision,
 * whether the isolate decided alone, failures), the key's root object's calls, queue waits and
 * overloads (and every object's calls together), and the {@link Judge}'s verdicts on admissions.
 * Seconds count from the run's start; a decision counts in the second the isolate took it.
 */
import type { Bounds } from './bounds'
import type { MachineClock } from './clocks'
import { Histogram } from './histogram'
import { Judge } from './judge'
import type { Verdict } from './limiter-adapter'
import type { ServerObserver } from './object-server'

/** One second of a run (the CSV's row). */
export interface SecondRow {
  second: number
  /** Requests that arrived. */
  demand: number
  admitted: number
  denied: number
  /** Denied while the exact limit had room. */
  earlyDenied: number
  overAdmitted: number
  /** What an exact limiter fed the same arrivals would have admitted. */
  idealAdmitted: number
  /** Calls that reached the key's root object. */
  rootCalls: number
  /** Calls that reached any object. */
  allCalls: number
  /** Calls that reached the key's regional objects (`<root>@region:<hint>`). */
  regionalCalls: number
  /** Calls that reached the key's objects in locations (`<root>@<colo>`). */
  locationCalls: number
  /** The root object's "overloaded" answers. */
  overloaded: number
  queueWaitP99Ms: number | null
  latencyP99Ms: number | null
  /** Share of decisions taken in the isolate with no awaited call. */
  localShare: number | null
  /** Requests let through undecided (the limiter failed open). */
  failedOpen: number
}

const MAX_LATENCY_MS = 10_000
const MAX_WAIT_MS = 1023

/** The run's counters. */
export class Metrics implements ServerObserver {
  readonly judge: Judge
  readonly #startMs: number
  readonly #seconds: number
  readonly #root: string
  readonly #rootClock: MachineClock
  #rootHeard: ((args: readonly unknown[] | undefined, atMs: number) => void) | undefined
  readonly #demand: Int32Array
  readonly #decided: Int32Array
  readonly #local: Int32Array
  readonly #failedOpen: Int32Array
  readonly #rootCalls: Int32Array
  readonly #allCalls: Int32Array
  readonly #regionalCalls: Int32Array
  readonly #locationCalls: Int32Array
  readonly #overloaded: Int32Array
  readonly #latency: Histogram
  readonly #wait: Histogram
  /** Each isolate's first request, for isolates started after the warm-up: wait, round trip. */
  readonly #coldWaits: [waitMs: number, roundTripMs: number][] = []

  /**
   * @param limits - the exact limits (a new {@link Bounds} each call), the rule's period, its tiers
   * @param startMs - the run's first instant
   * @param spanMs - the run and its tail (decisions may come until its end)
   * @param root - the key's root object: its name, and its machine's clock (the judge's)
   */
  constructor(
    limits: { bounds: (shared: boolean) => Bounds; periodMs: number; tiers: number },
    startMs: number,
    spanMs: number,
    root: { name: string; clock: MachineClock }
  ) {
    // Windows are the root's: the judge holds decisions to them by its clock.
    this.judge = new Judge(
      limits.bounds,
      limits.periodMs,
      limits.tiers,
      root.clock.read(startMs),
      spanMs
    )
    this.#startMs = startMs
    this.#seconds = Math.ceil(spanMs / 1000)
    this.#root = root.name
    this.#rootClock = root.clock
    const counts = () => new Int32Array(this.#seconds)
    this.#demand = counts()
    this.#decided = counts()
    this.#local = counts()
    this.#failedOpen = counts()
    this.#rootCalls = counts()
    this.#allCalls = counts()
    this.#regionalCalls = counts()
    this.#locationCalls = counts()
    this.#overloaded = counts()
    this.#latency = new Histogram(MAX_LATENCY_MS, this.#seconds)
    this.#wait = new Histogram(MAX_WAIT_MS, this.#seconds)
  }

  /** A request arrived. */
  request(atMs: number, cost: number, tier = 0): void {
    this.#demand[this.#second(atMs)]!++
    this.judge.arrived(this.#rootClock.read(atMs), cost, tier)
  }

  /**
   * A request was decided.
   *
   * @param arrivedAtMs - when it arrived
   * @param cost - its cost
   * @param verdict - what the limiter said
   * @param nowMs - when its isolate had the answer
   * @param tier - the request's tier
   */
  decided(arrivedAtMs: number, cost: number, verdict: Verdict, nowMs: number, tier = 0): void {
    const second = this.#second(nowMs)
    this.#decided[second]!++
    if (verdict.local) this.#local[second]!++
    if (!verdict.enforced && verdict.allowed) this.#failedOpen[second]!++
    this.#latency.add(nowMs - arrivedAtMs, second)
    const atMs = verdict.onRootClock
      ? verdict.decidedAtMs!
      : this.#rootClock.read(verdict.decidedAtMs ?? nowMs)
    if (verdict.allowed) this.judge.admitted(atMs, cost, tier, verdict.chargedAtMs)
    else this.judge.denied(atMs, cost, tier)
  }

  /**
   * The first request of an isolate started after the warm-up was decided.
   *
   * @param waitMs - from its arrival to its decision
   * @param roundTripMs - the isolate's round trip to the object it calls first
   */
  coldIsolate(waitMs: number, roundTripMs: number): void {
    this.#coldWaits.push([waitMs, roundTripMs])
  }

  /** The first requests of isolates started after the warm-up (see {@link coldIsolate}). */
  get coldWaits(): readonly (readonly [waitMs: number, roundTripMs: number])[] {
    return this.#coldWaits
  }

  arrived(name: string, atMs: number): void {
    const second = this.#second(atMs)
    this.#allCalls[second]!++
    if (name === this.#root) this.#rootCalls[second]!++
    else if (name.startsWith(`${this.#root}@region:`)) this.#regionalCalls[second]!++
    else if (name.startsWith(`${this.#root}@`)) this.#locationCalls[second]!++
  }

  /**
   * Tells `hear` of each call the key's root object runs, with its arguments: when the root
   * first hears of an edited rule.
   *
   * @param hear - told each call's arguments and its time (true time)
   */
  onRootCall(hear: (args: readonly unknown[] | undefined, atMs: number) => void): void {
    this.#rootHeard = hear
  }

  overloaded(name: string, atMs: number): void {
    if (name === this.#root) this.#overloaded[this.#second(atMs)]!++
  }

  started(name: string, waitMs: number, atMs: number, args?: readonly unknown[]): void {
    if (name !== this.#root) return
    this.#wait.add(waitMs, this.#second(atMs))
    this.#rootHeard?.(args, atMs)
  }

  /**
   * Latency from arrival to decision over seconds `[from, to)`.
   *
   * @param q - the quantile
   * @param from - first second
   * @param to - past the last
   */
  latencyMs(q: number, from: number, to: number): number | null {
    return this.#latency.quantile(q, from, to)
  }

  /** The root object's queue wait over seconds `[from, to)`. */
  queueWaitMs(q: number, from: number, to: number): number | null {
    return this.#wait.quantile(q, from, to)
  }

  /**
   * The first `seconds` seconds, one row each.
   *
   * @param seconds - how many
   */
  rows(seconds: number): SecondRow[] {
    const j = this.judge
    return Array.from({ length: seconds }, (_, s) => ({
      second: s,
      demand: this.#demand[s]!,
      admitted: j.admittedPerSecond[s]!,
      denied: j.deniedPerSecond[s]!,
      earlyDenied: j.earlyPerSecond[s]!,
      overAdmitted: j.overAdmittedPerSecond[s]!,
      idealAdmitted: j.idealPerSecond[s]!,
      rootCalls: this.#rootCalls[s]!,
      allCalls: this.#allCalls[s]!,
      regionalCalls: this.#regionalCalls[s]!,
      locationCalls: this.#locationCalls[s]!,
      overloaded: this.#overloaded[s]!,
      queueWaitP99Ms: this.#wait.quantile(0.99, s),
      latencyP99Ms: this.#latency.quantile(0.99, s),
      localShare: this.#decided[s]! > 0 ? this.#local[s]! / this.#decided[s]! : null,
      failedOpen: this.#failedOpen[s]!,
    }))
  }

  /** Decisions and local decisions over seconds `[from, to)`. */
  decisions(from: number, to: number): { decided: number; local: number } {
    let decided = 0
    let local = 0
    for (let s = from; s < to; s++) {
      decided += this.#decided[s]!
      local += this.#local[s]!
    }
    return { decided, local }
  }

  #second(atMs: number): number {
    return Math.min(this.#seconds - 1, Math.max(0, Math.floor((atMs - this.#startMs) / 1000)))
  }
}
