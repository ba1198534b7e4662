/**
 * @module rules/duration
 * Durations in rules: `"500ms"`, `"10s"`, `"1m"`, `"1h"`, `"1d"`, or a number of seconds.
 */

/** The longest period a rule may use: 365 days. */
export const MAX_PERIOD_MS = 365 * 24 * 60 * 60 * 1000

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/

/**
 * Parses a duration into whole milliseconds.
 *
 * @param input - `"<number><unit>"` with unit ms, s, m, h or d, or a number of seconds
 * @returns the duration in ms, or `undefined` if `input` is not a positive duration of at
 *   least 1 ms and at most {@link MAX_PERIOD_MS}
 * @example parseDuration('1m') // 60000
 */
export function parseDuration(input: unknown): number | undefined {
  let ms: number
  if (typeof input === 'number') {
    ms = input * 1000
  } else if (typeof input === 'string') {
    const match = DURATION.exec(input.trim())
    if (!match) return undefined
    ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
  } else {
    return undefined
  }
  if (!Number.isFinite(ms) || ms < 1 || ms > MAX_PERIOD_MS) return undefined
  return Math.round(ms)
}

/**
 * Formats ms the way a person would write them: `60000` → `"1m"`, `1500` → `"1500ms"`.
 *
 * @param ms - a duration in ms
 */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`
  }
  return `${ms}ms`
}
