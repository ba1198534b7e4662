/**
 * @module tools/scale/summary
 * A run in one record (what `--json` prints). Rates, shares and percentiles leave out the warm-up
 * seconds (every isolate starts cold at once, as after a deploy); over-admission, the fullest
 * window and the overloads of the warm-up are counted over the whole run.
 */
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import type { Metrics } from './metrics'
import type { RunOptions, SimWorld } from './run-options'

/** One run's figures. */
export interface Summary {
  scenario: string
  mode: string
  algorithm: string
  isolates: number
  locations: number
  demand: number
  seconds: number
  /** Seconds at the start left out of rates, shares and percentiles. */
  warmupSeconds: number
  seed: number
  /** A bucket's burst in seconds of its rate, when set (else its limit). */
  burstSeconds?: number
  /** The world it ran in: clocks, tiers, the rule's edit (when made), lost answers, a deploy. */
  world: Omit<SimWorld, 'editAtS'> & { editAtS: number | null }
  /** Requests that arrived after the warm-up. */
  requests: number
  /** Calls reaching the key's root object per second: mean and the busiest second. */
  objectCallsPerSecond: { mean: number; peak: number }
  /** The same for every object together. */
  allObjectCallsPerSecond: { mean: number; peak: number }
  /** The same for the key's regional objects, and for its objects in locations. */
  tierCallsPerSecond: {
    regional: { mean: number; peak: number }
    location: { mean: number; peak: number }
  }
  /** The root object's queue wait (ms). */
  queueWaitMs: { p50: number | null; p99: number | null }
  /** The root object's "overloaded" answers after the warm-up, and during it. */
  overloaded: number
  overloadedInWarmup: number
  /** Admissions the exact limit refuses (whole run): any fails the run. */
  overAdmitted: number
  /** The fullest aligned window's admissions, and what the limit allows in one. */
  fullestWindow: { admitted: number; allowed: number }
  /** Denials while the exact limit had room, as a share of all requests. */
  earlyDenialShare: number
  /** Admitted / what an exact limiter fed the same arrivals admitted. */
  admittedShare: number
  /**
   * The same, per whole aligned window after the first (the warm-up's effect on the first
   * window's room left out): the mean over them and the lowest; `null` when the run has none.
   */
  windowShare: { mean: number; min: number } | null
  /** Seconds from the shift until admissions are back to 99 % of before (`shift` only). */
  recoverySeconds: number | null
  /** Share of decisions taken in the isolate with no awaited call. */
  localShare: number
  /** Arrival to decision (virtual ms; a decision in the isolate takes 0). */
  latencyMs: { p50: number | null; p99: number | null; p999: number | null }
  /**
   * The first request of each isolate started after the warm-up (churn): how long it waited
   * (ms), and how much longer than one round trip to the object it called first (its
   * location's in leased mode, the key's root in exact mode: there, one service time, back),
   * which is that object's queue, or its own call up the tiers.
   */
  coldIsolates: {
    count: number
    waitMs: Quantiles
    overRoundTripMs: Quantiles
  }
  /** Requests let through because no decision could be had. */
  failedOpen: number
  /** Isolates started by churn. */
  isolatesStarted: number
  /** What the limiter logged, by event (`rate-limit-fail-open`, `lease-refund-failed`, …). */
  logged: Record<string, number>
  /** Decisions that reached the judge after their millisecond was judged (should be 0). */
  lateDecisions: number
  wallSeconds: number
}

/** What the run adds to the metrics. */
interface RunFacts {
  policy: LeasablePolicy
  shiftAtMs: number | undefined
  isolatesStarted: number
  logged: Record<string, number>
  wallSeconds: number
}

/**
 * The summary of a finished run.
 *
 * @param options - what was simulated
 * @param metrics - what was counted
 * @param facts - the rest
 */
export function summarise(options: RunOptions, metrics: Metrics, facts: RunFacts): Summary {
  const rows = metrics.rows(options.seconds)
  const from = Math.min(options.warmupS, options.seconds - 1)
  const to = options.seconds
  const measured = rows.slice(from)
  const total = (pick: (row: (typeof rows)[number]) => number) =>
    measured.reduce((a, row) => a + pick(row), 0)
  const perSecond = (pick: (row: (typeof rows)[number]) => number) => ({
    mean: round(total(pick) / measured.length, 1),
    peak: Math.max(...measured.map(pick)),
  })
  const { decided, local } = metrics.decisions(from, to)
  const { policy } = facts
  const allowed = 'burst' in policy ? policy.burst + policy.limit : policy.limit
  return {
    scenario: options.scenario,
    mode: options.mode,
    algorithm: options.algorithm,
    isolates: options.isolates,
    locations: options.locations,
    demand: options.demand,
    seconds: options.seconds,
    warmupSeconds: from,
    seed: options.seed,
    ...(options.burstS !== undefined ? { burstSeconds: options.burstS } : {}),
    world: {
      ...options.world,
      editAtS:
        options.world.edit === 'none'
          ? null
          : (options.world.editAtS ?? Math.floor(options.seconds / 2)),
    },
    requests: total((r) => r.demand),
    objectCallsPerSecond: perSecond((r) => r.rootCalls),
    allObjectCallsPerSecond: perSecond((r) => r.allCalls),
    tierCallsPerSecond: {
      regional: perSecond((r) => r.regionalCalls),
      location: perSecond((r) => r.locationCalls),
    },
    queueWaitMs: {
      p50: metrics.queueWaitMs(0.5, from, to),
      p99: metrics.queueWaitMs(0.99, from, to),
    },
    overloaded: total((r) => r.overloaded),
    overloadedInWarmup: rows.slice(0, from).reduce((a, r) => a + r.overloaded, 0),
    overAdmitted: metrics.judge.overAdmitted,
    fullestWindow: { admitted: metrics.judge.fullestWindow(), allowed },
    earlyDenialShare: share(
      total((r) => r.earlyDenied),
      decided
    ),
    admittedShare: share(
      total((r) => r.admitted),
      total((r) => r.idealAdmitted)
    ),
    windowShare: windowShare(rows, facts.policy.periodMs / 1000),
    recoverySeconds:
      facts.shiftAtMs === undefined
        ? null
        : recovery(metrics.judge.admittedPerTick, facts.shiftAtMs),
    localShare: share(local, decided),
    latencyMs: {
      p50: metrics.latencyMs(0.5, from, to),
      p99: metrics.latencyMs(0.99, from, to),
      p999: metrics.latencyMs(0.999, from, to),
    },
    coldIsolates: coldIsolates(metrics.coldWaits),
    failedOpen: total((r) => r.failedOpen),
    isolatesStarted: facts.isolatesStarted,
    logged: facts.logged,
    lateDecisions: metrics.judge.late,
    wallSeconds: round(facts.wallSeconds, 1),
  }
}

/**
 * Seconds from the shift to the start of the first 1 s window (windows sliding by 100 ms) from
 * which every window of the next 5 s admits at least 99 % of the mean over the 10 s before the
 * shift; 0 when admissions never dipped, `null` when they never came back.
 *
 * @param perTick - admissions per 100 ms from the start of the run
 * @param shiftAtMs - when the shift began (ms from the start)
 */
export function recovery(perTick: Int32Array, shiftAtMs: number): number | null {
  const shiftTick = Math.floor(shiftAtMs / 100)
  const windowAt = (tick: number) => {
    let n = 0
    for (let k = tick; k < tick + 10; k++) n += perTick[k] ?? 0
    return n
  }
  let before = 0
  for (let k = Math.max(0, shiftTick - 100); k < shiftTick; k++) before += perTick[k]!
  const baseline = before / Math.min(10, shiftTick / 10)
  const holds = (tick: number) => windowAt(tick) >= 0.99 * baseline
  for (let tick = shiftTick; tick + 60 <= perTick.length; tick++) {
    let ok = true
    for (let k = tick; k <= tick + 50 && ok; k++) ok = holds(k)
    if (ok) return (tick - shiftTick) / 10
  }
  return null
}

/**
 * Admitted / what the exact limit admitted, per whole aligned window after the first.
 *
 * @param rows - one per second from the run's start (a window's start)
 * @param windowSeconds - the window's length in seconds
 */
export function windowShare(
  rows: readonly { admitted: number; idealAdmitted: number }[],
  windowSeconds: number
): { mean: number; min: number } | null {
  const length = Math.max(1, Math.round(windowSeconds))
  let admitted = 0
  let ideal = 0
  let min = Number.POSITIVE_INFINITY
  for (let start = length; start + length <= rows.length; start += length) {
    const window = rows.slice(start, start + length)
    const a = window.reduce((sum, row) => sum + row.admitted, 0)
    const i = window.reduce((sum, row) => sum + row.idealAdmitted, 0)
    admitted += a
    ideal += i
    if (i > 0) min = Math.min(min, a / i)
  }
  return ideal > 0 ? { mean: admitted / ideal, min } : null
}

/** Median, 99th percentile and most; `null` for none. */
interface Quantiles {
  p50: number | null
  p99: number | null
  max: number | null
}

/**
 * The cold isolates' first waits, summed up.
 *
 * @param waits - each one's wait and its round trip (ms)
 */
export function coldIsolates(
  waits: readonly (readonly [waitMs: number, roundTripMs: number])[]
): Summary['coldIsolates'] {
  return {
    count: waits.length,
    waitMs: quantiles(waits.map(([waitMs]) => waitMs)),
    overRoundTripMs: quantiles(
      waits.map(([waitMs, roundTripMs]) => Math.max(0, waitMs - roundTripMs))
    ),
  }
}

function quantiles(values: number[]): Quantiles {
  const sorted = values.sort((a, b) => a - b)
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? null }
}

function share(part: number, whole: number): number {
  return whole > 0 ? part / whole : 0
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}
