/**
 * @module tools/simulate/accuracy
 * How far each rule strays from the exact limit: what it admitted against an independent exact
 * sliding-log oracle, its fullest window, and each of its decisions judged on its own history
 * (see ./agreement). Pure.
 */
import { ownHistoryAgreement, type Agreement } from './agreement'
import type { Arrival } from './profile'
import { fullestWindow, type Charge, type Peak } from './windows'

/**
 * The exact limit: a request is admitted iff the units admitted for its key in (t − period, t]
 * plus its cost stay within `limit`. Written from that definition alone, sharing nothing with
 * the project's algorithms.
 *
 * @param arrivals - requests sorted by time
 * @param keys - the counter each request is charged to (defaults to the request's own key)
 * @param limit - units per window
 * @param periodMs - window length
 * @returns for each request, whether the oracle admits it
 */
export function oracleAdmits(
  arrivals: readonly Arrival[],
  keys: readonly string[] | undefined,
  limit: number,
  periodMs: number
): boolean[] {
  const logs = new Map<string, { times: number[]; costs: number[]; head: number; sum: number }>()
  return arrivals.map(({ t, cost, key }, i) => {
    const id = keys?.[i] ?? key
    let log = logs.get(id)
    if (!log) logs.set(id, (log = { times: [], costs: [], head: 0, sum: 0 }))
    while (log.head < log.times.length && log.times[log.head]! <= t - periodMs)
      log.sum -= log.costs[log.head++]!
    if (log.sum + cost > limit) return false
    log.times.push(t)
    log.costs.push(cost)
    log.sum += cost
    return true
  })
}

/** One rule's accuracy. */
export interface AccuracyRow {
  id: string
  algorithm: string
  limit: number
  periodMs: number
  requests: number
  /** Requests the rule allowed, and those the independent oracle allowed. */
  allowed: number
  oracleAllowed: number
  /** The fullest window of what the rule admitted (at execution for a shaper). */
  fullest: Peak
  /** Units of the fullest window over the limit; 0 if it never exceeded it. */
  overshoot: number
  /** Each decision judged against the rule's own history. */
  agreement: Agreement
  /** Whether units were counted at execution (arrival + delay) instead of arrival. */
  byExecution: boolean
}

/** What {@link accuracyOf} needs to know about a rule and its run. */
export interface RuleRun {
  id: string
  algorithm: string
  limit: number
  periodMs: number
  byExecution: boolean
  keys: readonly string[]
  allowed: readonly boolean[]
  delayMs: readonly number[]
}

/**
 * Measures a rule's run over the requests: its admissions against the oracle's, its fullest
 * window (admitted units at arrival, or at execution for a shaper: what the origin sees), and
 * its same-history agreement.
 *
 * @param arrivals - requests sorted by time
 * @param run - the rule and its outcomes, indexed like the requests
 */
export function accuracyOf(arrivals: readonly Arrival[], run: RuleRun): AccuracyRow {
  const oracle = oracleAdmits(arrivals, run.keys, run.limit, run.periodMs)
  const fullest = fullestWindow(chargesOf(arrivals, run), run.periodMs)
  return {
    id: run.id,
    algorithm: run.algorithm,
    limit: run.limit,
    periodMs: run.periodMs,
    requests: arrivals.length,
    allowed: run.allowed.filter(Boolean).length,
    oracleAllowed: oracle.filter(Boolean).length,
    fullest,
    overshoot: Math.max(0, fullest.units - run.limit),
    agreement: ownHistoryAgreement(arrivals, run, oracle),
    byExecution: run.byExecution,
  }
}

/**
 * The units a rule let through, charged to its limit keys: at arrival, or at execution
 * (arrival + delay) when `byExecution`.
 *
 * @param arrivals - the requests
 * @param run - the rule's keys and decisions, indexed like the requests
 */
export function chargesOf(
  arrivals: readonly Arrival[],
  run: Pick<RuleRun, 'byExecution' | 'keys' | 'allowed' | 'delayMs'>
): Charge[] {
  const charges: Charge[] = []
  arrivals.forEach(({ t, cost }, i) => {
    if (!run.allowed[i]) return
    const delay = run.byExecution ? (run.delayMs[i] ?? 0) : 0
    charges.push({ t: t + delay, cost, key: run.keys[i]! })
  })
  return charges
}
