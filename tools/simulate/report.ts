/**
 * @module tools/simulate/report
 * The accuracy table, as Markdown for accuracy.md and as aligned text for the terminal. Pure.
 */
import type { AccuracyRow } from './accuracy'

/**
 * Notes naming each rule that allowed and denied exactly the requests an earlier rule did.
 *
 * @param runs - each rule's id and decisions, indexed like the requests
 */
export function sameDecisionNotes(
  runs: readonly { id: string; allowed: readonly boolean[] }[]
): string[] {
  const notes: string[] = []
  runs.forEach((run, i) => {
    const twin = runs
      .slice(0, i)
      .find((other) => other.allowed.every((allowed, r) => allowed === run.allowed[r]))
    if (twin) notes.push(`${run.id} allowed and denied exactly the requests ${twin.id} did.`)
  })
  return notes
}

const HEADINGS = [
  'Rule',
  'Algorithm',
  'Requests',
  'Allowed',
  'Oracle allowed',
  'Wrongly allowed',
  'Wrongly denied',
  'Worst overshoot (by arrival; * by execution)',
]

/** The note above the table: what the columns measure. */
export const ACCURACY_NOTE =
  'Oracle: an exact sliding log (admit iff units admitted in (t − period, t] plus the cost ≤ limit). ' +
  'Wrongly allowed/denied: share of all requests decided differently from the oracle; once ' +
  'a rule has admitted other requests than the oracle, their histories differ, so these ' +
  'shares measure divergence, not only mistakes. ' +
  'Worst overshoot: the most units admitted in any window (t − period, t], less the limit. ' +
  'Judged by arrival time, except the shaper (marked *): its admitted units are counted at ' +
  'execution time (arrival + delayMs).'

function cells(row: AccuracyRow): string[] {
  const share = (n: number) => `${percent(n / Math.max(1, row.requests))} (${n})`
  return [
    row.byExecution ? `${row.id} *` : row.id,
    row.algorithm,
    String(row.requests),
    String(row.allowed),
    String(row.oracleAllowed),
    share(row.wronglyAllowed),
    share(row.wronglyDenied),
    `${row.overshoot} units (${percent(row.overshoot / row.limit)} of ${row.limit})`,
  ]
}

/**
 * The table as Markdown, under a title and the note.
 *
 * @param rows - one per rule
 * @param notes - extra lines (e.g. skipped rules), listed under the table
 */
export function accuracyMarkdown(rows: readonly AccuracyRow[], notes: readonly string[]): string {
  const line = (values: string[]) => `| ${values.join(' | ')} |`
  const table = [
    line(HEADINGS),
    line(HEADINGS.map((_, i) => (i < 2 ? '---' : '---:'))),
    ...rows.map((row) => line(cells(row))),
  ]
  const extra = notes.length > 0 ? `\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''
  return `# Accuracy against an exact sliding log\n\n${ACCURACY_NOTE}\n\n${table.join('\n')}\n${extra}`
}

/**
 * The table as aligned plain text, for the terminal.
 *
 * @param rows - one per rule
 */
export function accuracyText(rows: readonly AccuracyRow[]): string {
  const table = [HEADINGS, ...rows.map(cells)]
  const widths = HEADINGS.map((_, c) => Math.max(...table.map((r) => r[c]!.length)))
  const format = (r: string[]) =>
    r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [format(HEADINGS), rule, ...table.slice(1).map(format)].join('\n').replace(/ +$/gm, '')
}

function percent(fraction: number): string {
  return `${(Math.round(fraction * 10000) / 100).toFixed(2)}%`
}
