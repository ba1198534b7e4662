/**
 * @module tools/simulate/stats
 * Per-second figures of one rule's run, as a classic rate-limiter test console prints them, and
 * their CSV.
 * Pure.
 */

/** The CSV header: that console's columns; row n is second n of the run. */
export const CSV_HEADER =
  'TotalRequests,SuccessRequests,FailRequests,ExecutedRequests,AverageExecuteTime'

/** One second of a run. Counts are requests, not units. */
export interface SecondRow {
  second: number
  /** Requests that arrived in this second. */
  total: number
  /** Of those, allowed. */
  success: number
  /** Of those, denied. */
  fail: number
  /** Requests whose execution (arrival + delay) falls in this second, whenever they arrived. */
  executed: number
  /** Mean ms from acceptance to execution of the requests executed this second; 0 if none. */
  averageExecuteMs: number
}

/** What {@link perSecond} needs of a rule's outcomes, indexed like the requests. */
export interface Outcomes {
  allowed: readonly boolean[]
  delayMs: readonly number[]
}

/**
 * Buckets a rule's outcomes into seconds 0 … seconds − 1; anything later is left out.
 *
 * @param times - arrival time of each request, ms from the start
 * @param outcomes - the rule's decisions for those requests
 * @param seconds - how many rows
 */
export function perSecond(
  times: readonly number[],
  outcomes: Outcomes,
  seconds: number
): SecondRow[] {
  const rows: SecondRow[] = Array.from({ length: seconds }, (_, second) => ({
    second,
    total: 0,
    success: 0,
    fail: 0,
    executed: 0,
    averageExecuteMs: 0,
  }))
  const waited = new Array<number>(seconds).fill(0)
  times.forEach((t, i) => {
    const arrival = rows[Math.floor(t / 1000)]
    if (arrival) {
      arrival.total++
      if (outcomes.allowed[i]) arrival.success++
      else arrival.fail++
    }
    if (!outcomes.allowed[i]) return
    const delay = outcomes.delayMs[i] ?? 0
    const second = Math.floor((t + delay) / 1000)
    const executed = rows[second]
    if (!executed) return
    executed.executed++
    waited[second]! += delay
  })
  for (const row of rows)
    if (row.executed > 0) row.averageExecuteMs = waited[row.second]! / row.executed
  return rows
}

/**
 * How many whole seconds a run spans: through the last arrival and the last execution.
 *
 * @param times - arrival times, ms
 * @param runs - every rule's outcomes
 */
export function secondsSpanned(times: readonly number[], runs: readonly Outcomes[]): number {
  let last = 0
  times.forEach((t, i) => {
    last = Math.max(last, t)
    for (const run of runs) if (run.allowed[i]) last = Math.max(last, t + (run.delayMs[i] ?? 0))
  })
  return Math.floor(last / 1000) + 1
}

/**
 * The rows as CSV under {@link CSV_HEADER}, LF line endings, averages to 2 decimals.
 *
 * @param rows - one per second
 */
export function toCsv(rows: readonly SecondRow[]): string {
  const lines = rows.map((r) =>
    [r.total, r.success, r.fail, r.executed, round2(r.averageExecuteMs)].join(',')
  )
  return `${CSV_HEADER}\n${lines.join('\n')}\n`
}

/**
 * Rounds to 2 decimals for printing (`12.5`, `0`, `333.33`).
 *
 * @param value - any finite number
 */
export function round2(value: number): number {
  return Math.round(value * 100) / 100
}
