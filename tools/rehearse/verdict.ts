/**
 * @module tools/rehearse/verdict
 * The verdict for CI: `--fail-if` conditions on the comparison (`newly-denied>0.1%`,
 * `newly-denied>100`, `newly-denied-keys>5`, `newly-allowed>=1%`), each crossed or not. Pure.
 */
import type { Judged, Totals } from './report-types'

/** What a condition measures. */
const METRICS = {
  'newly-denied': { of: (t: Totals) => t.newlyDenied, percent: true },
  'newly-allowed': { of: (t: Totals) => t.newlyAllowed, percent: true },
  'newly-denied-keys': { of: (t: Totals) => t.newlyDeniedKeys, percent: false },
} as const

type Metric = keyof typeof METRICS

/** A parsed `--fail-if` condition. */
export interface Condition {
  /** As written. */
  text: string
  metric: Metric
  orEqual: boolean
  threshold: number
  /** The threshold is a percentage of the requests replayed. */
  percent: boolean
}

const SYNTAX = /^([a-z-]+)\s*(>=|>)\s*(\d+(?:\.\d+)?)(%?)$/

/**
 * Reads a condition.
 *
 * @param text - as given to `--fail-if`
 * @returns the condition, or what is wrong with it
 */
export function parseCondition(text: string): Condition | string {
  const parts = SYNTAX.exec(text.trim())
  const names = Object.keys(METRICS).join(', ')
  if (!parts)
    return `--fail-if ${JSON.stringify(text)}: expected <measure>><number>[%], e.g. newly-denied>0.1% (measures: ${names})`
  const [, name, operator, number, percent] = parts as unknown as [
    string,
    string,
    string,
    string,
    string,
  ]
  if (!(name in METRICS))
    return `--fail-if ${JSON.stringify(text)}: no measure ${name} (measures: ${names})`
  const metric = name as Metric
  if (percent && !METRICS[metric].percent)
    return `--fail-if ${JSON.stringify(text)}: ${metric} is a count of keys, not a share of requests`
  return {
    text: text.trim(),
    metric,
    orEqual: operator === '>=',
    threshold: Number(number),
    percent: percent === '%',
  }
}

/**
 * Judges each condition.
 *
 * @param conditions - the parsed conditions
 * @param totals - the comparison's totals
 */
export function judge(conditions: readonly Condition[], totals: Totals): Judged[] {
  return conditions.map((condition) => {
    const count = METRICS[condition.metric].of(totals)
    const value = condition.percent ? (100 * count) / Math.max(1, totals.total) : count
    const crossed = condition.orEqual ? value >= condition.threshold : value > condition.threshold
    const shown = condition.percent
      ? `${round(value)}% (${count} of ${totals.total})`
      : String(value)
    return { condition: condition.text, value: shown, crossed }
  })
}

function round(value: number): string {
  return value === 0
    ? '0'
    : value < 0.001
      ? value.toExponential(1)
      : String(Number(value.toPrecision(3)))
}
