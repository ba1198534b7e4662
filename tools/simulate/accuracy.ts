/**
 * @module tools/simulate/accuracy
 * How far each rule strays from the exact limit: an independent sliding-log oracle, the share of
 * requests decided differently from it, and the worst overshoot in any window. Pure.
 */
import type { Arrival } from './profile'

/** One admitted (or executed) batch of units, for {@link worstOvershoot}. */
export interface Charge {
  t: number
  cost: number
  key: string
}

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

/**
 * The worst overshoot: the most units charged to one key in any window (t − period, t], less
 * the limit; 0 if no window ever exceeds it.
 *
 * @param charges - admitted units, in any order
 * @param limit - units per window
 * @param periodMs - window length
 */
export function worstOvershoot(
  charges: readonly Charge[],
  limit: number,
  periodMs: number
): number {
  const byKey = new Map<string, Charge[]>()
  for (const charge of charges) {
    const list = byKey.get(charge.key)
    if (list) list.push(charge)
    else byKey.set(charge.key, [charge])
  }
  let worst = 0
  for (const list of byKey.values()) {
    list.sort((a, b) => a.t - b.t)
    let head = 0
    let sum = 0
    list.forEach(({ t, cost }, i) => {
      sum += cost
      while (list[head]!.t <= t - periodMs) sum -= list[head++]!.cost
      // A window ending at t holds every charge at t: measure after the last of them.
      if (list[i + 1]?.t !== t) worst = Math.max(worst, sum - limit)
    })
  }
  return worst
}

/** One rule's accuracy. Shares are fractions of all its requests. */
export interface AccuracyRow {
  id: string
  algorithm: string
  limit: number
  requests: number
  allowed: number
  oracleAllowed: number
  /** Allowed by the rule, denied by the oracle. */
  wronglyAllowed: number
  /** Denied by the rule, allowed by the oracle. */
  wronglyDenied: number
  /** Worst overshoot in units (see {@link worstOvershoot}). */
  overshoot: number
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
 * Compares a rule's run with the oracle over the same requests, limit and period. Decisions are
 * compared request by request; the overshoot counts the rule's admitted units at arrival, or at
 * execution for a shaper (what the origin sees).
 *
 * @param arrivals - requests sorted by time
 * @param run - the rule and its outcomes, indexed like the requests
 */
export function accuracyOf(arrivals: readonly Arrival[], run: RuleRun): AccuracyRow {
  const oracle = oracleAdmits(arrivals, run.keys, run.limit, run.periodMs)
  const charges: Charge[] = []
  const row: AccuracyRow = {
    id: run.id,
    algorithm: run.algorithm,
    limit: run.limit,
    requests: arrivals.length,
    allowed: 0,
    oracleAllowed: 0,
    wronglyAllowed: 0,
    wronglyDenied: 0,
    overshoot: 0,
    byExecution: run.byExecution,
  }
  arrivals.forEach(({ t, cost }, i) => {
    const allowed = run.allowed[i]!
    if (allowed) row.allowed++
    if (oracle[i]) row.oracleAllowed++
    if (allowed && !oracle[i]) row.wronglyAllowed++
    if (!allowed && oracle[i]) row.wronglyDenied++
    if (allowed) {
      const delay = run.byExecution ? (run.delayMs[i] ?? 0) : 0
      charges.push({ t: t + delay, cost, key: run.keys[i]! })
    }
  })
  row.overshoot = worstOvershoot(charges, run.limit, run.periodMs)
  return row
}
