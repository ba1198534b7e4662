/**
 * @module log
 * The limiter's log lines: one JSON object each, with a budget. Many events follow a client's
 * requests (a refusal in shadow, a fail-open, a degraded request), so a client could otherwise
 * make the Worker write as many lines as it sends requests, times the rules. Each event name may
 * write {@link LINES_PER_EVENT_PER_MINUTE} lines a minute in an isolate; past that its lines are
 * counted, and the first line written in a later minute is preceded by one `log-suppressed`
 * line that says how many of each were left out.
 */

/** Lines one event name may write per isolate and minute. */
export const LINES_PER_EVENT_PER_MINUTE = 100

/** The levels the limiter logs at. */
export type LogLevel = 'log' | 'warn' | 'error'

/** What an isolate has written this minute, and left out. */
export class LogBudget {
  #minute = Number.NEGATIVE_INFINITY
  readonly #written = new Map<string, number>()
  readonly #suppressed = new Map<string, number>()

  /**
   * Whether a line of `event` may be written now; if not, it is counted as left out. Calls
   * `write` with the summary of the minutes before when one is due.
   *
   * @param event - the event name
   * @param nowMs - the current time
   * @param write - where the summary goes
   */
  admit(event: string, nowMs: number, write: (line: string) => void): boolean {
    const minute = Math.floor(nowMs / 60_000) * 60_000
    if (minute !== this.#minute) {
      if (this.#suppressed.size > 0) {
        write(
          JSON.stringify({
            event: 'log-suppressed',
            since: new Date(Math.max(0, this.#minute)).toISOString(),
            perMinute: LINES_PER_EVENT_PER_MINUTE,
            suppressed: Object.fromEntries(this.#suppressed),
          })
        )
        this.#suppressed.clear()
      }
      this.#written.clear()
      this.#minute = minute
    }
    const written = this.#written.get(event) ?? 0
    if (written < LINES_PER_EVENT_PER_MINUTE) {
      this.#written.set(event, written + 1)
      return true
    }
    this.#suppressed.set(event, (this.#suppressed.get(event) ?? 0) + 1)
    return false
  }
}

const isolateBudget = new LogBudget()

/**
 * Writes one JSON log line `{ event, ...fields }`, within the isolate's budget.
 *
 * @param level - the console method
 * @param event - the event name (the budget is per name)
 * @param fields - the rest of the line
 */
export function logEvent(
  level: LogLevel,
  event: string,
  fields: Record<string, unknown> = {}
): void {
  const write = (line: string) => console[level](line)
  if (isolateBudget.admit(event, Date.now(), write)) write(JSON.stringify({ event, ...fields }))
}
