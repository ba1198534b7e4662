/**
 * @module tools/simulate/agreement
 * Same-history agreement: each decision of a rule judged against an exact sliding log of what
 * that rule itself admitted. Unlike a comparison with an independent oracle, whose history drifts
 * away from the rule's after its first different decision, this asks of every single decision:
 * given what this rule had let through in (t − period, t], would an exact limiter have decided
 * the same? Pure.
 */

/** How full the rule's own window was before a request: `units in (t − period, t] / limit`. */
export const BANDS = [
  { label: '< 50 %', below: 0.5 },
  { label: '50–90 %', below: 0.9 },
  { label: '90–100 %', below: 1 },
  { label: '≥ 100 %', below: Number.POSITIVE_INFINITY },
] as const

/** Decisions judged, and those an exact limiter with the same history would have reversed. */
export interface Tally {
  judged: number
  /** Allowed, though the window could not take the cost. */
  wronglyAllowed: number
  /** Denied, though the window could take the cost. */
  wronglyDenied: number
}

/** What {@link ownHistoryAgreement} finds for one rule. */
export interface Agreement {
  all: Tally
  /** One per {@link BANDS} entry. */
  bands: Tally[]
  /** The requests of keys whose traffic never exceeded the limit (the oracle denied none). */
  withinLimit: Tally
  /** Limit keys seen, and those whose traffic never exceeded the limit. */
  keys: number
  keysWithinLimit: number
  /** The most room (limit − units in the window) left when denying a request that fit; 0 if none. */
  underAdmission: number
}

/** What the judgement needs of a rule's run, indexed like the requests. */
export interface JudgedRun {
  limit: number
  periodMs: number
  /**
   * A shaper, judged by execution (arrival + delay: the origin's windows). It must run what it
   * admits first come, first served, as the project's leaky bucket does.
   */
  byExecution: boolean
  keys: readonly string[]
  allowed: readonly boolean[]
  delayMs: readonly number[]
}

const tally = (): Tally => ({ judged: 0, wronglyAllowed: 0, wronglyDenied: 0 })

/** A key's own history: times and costs of what the rule let through, oldest first. */
interface Log {
  times: number[]
  costs: number[]
  /** Entries before `head` have left every window still to be judged. */
  head: number
  sum: number
}

/**
 * Judges every decision of a run on its own history (see the module note). A request of cost c
 * arriving at t when the rule's own window (t − period, t] holds u units should pass iff
 * u + c ≤ limit. A shaper's admitted request is judged at its execution x against the units
 * executed in (x − period, x]. Its denial is judged by what the origin sees at arrival: wrong if
 * nothing was queued and the executed window had room (with a queue, denying is its queue's
 * policy, `burst` and `maxWait`, not a miscount).
 *
 * @param arrivals - requests sorted by time
 * @param run - the rule's limit and decisions
 * @param oracle - the independent exact oracle's decisions, to find keys that stayed within the limit
 */
export function ownHistoryAgreement(
  arrivals: readonly { t: number; cost: number }[],
  run: JudgedRun,
  oracle: readonly boolean[]
): Agreement {
  const { limit, periodMs, keys, allowed } = run
  const overLimit = new Set<string>()
  oracle.forEach((admitted, i) => admitted || overLimit.add(keys[i]!))
  const result: Agreement = {
    all: tally(),
    bands: BANDS.map(tally),
    withinLimit: tally(),
    keys: 0,
    keysWithinLimit: 0,
    underAdmission: 0,
  }
  const logs = new Map<string, Log>()
  arrivals.forEach(({ t, cost }, i) => {
    let log = logs.get(keys[i]!)
    if (!log) logs.set(keys[i]!, (log = { times: [], costs: [], head: 0, sum: 0 }))
    // A shaper's admitted request counts when it runs; its denial, at arrival.
    const at = run.byExecution && allowed[i] ? t + (run.delayMs[i] ?? 0) : t
    const queued = run.byExecution && (log.times.at(-1) ?? t) > t
    while (log.head < log.times.length && log.times[log.head]! <= at - periodMs)
      log.sum -= log.costs[log.head++]!
    // A denial behind a queue: the origin's capacity is taken; judge it as a full window.
    const full = queued && !allowed[i]
    const fill = full ? 1 : log.sum / limit
    const room = full ? 0 : limit - log.sum
    const fits = cost <= room
    const tallies = [result.all, result.bands[BANDS.findIndex((band) => fill < band.below)]!]
    if (!overLimit.has(keys[i]!)) tallies.push(result.withinLimit)
    for (const each of tallies) {
      each.judged++
      if (allowed[i] && !fits) each.wronglyAllowed++
      if (!allowed[i] && fits) each.wronglyDenied++
    }
    if (!allowed[i] && fits) result.underAdmission = Math.max(result.underAdmission, room)
    if (allowed[i]) {
      log.times.push(at)
      log.costs.push(cost)
      log.sum += cost
    }
  })
  result.keys = logs.size
  result.keysWithinLimit = logs.size - overLimit.size
  return result
}

/**
 * Decisions an exact limiter with the same history would have reversed.
 *
 * @param counts - a tally
 */
export function disagreements(counts: Tally): number {
  return counts.wronglyAllowed + counts.wronglyDenied
}
