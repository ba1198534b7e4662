/**
 * @module tools/simulate/report
 * The accuracy tables, as Markdown for accuracy.md and as aligned text for the terminal. Pure.
 */
import type { AccuracyRow } from './accuracy'
import { BANDS, disagreements, type Tally } from './agreement'
import { whichFits, WHICH_FITS_HEADINGS } from './choose'

/**
 * For each rule, the first earlier rule that allowed and denied exactly the same requests, if any.
 *
 * @param runs - each rule's id and decisions, indexed like the requests
 */
export function sameDecisionsAs(
  runs: readonly { id: string; allowed: readonly boolean[] }[]
): (string | undefined)[] {
  return runs.map(
    (run, i) =>
      runs
        .slice(0, i)
        .find((other) => other.allowed.every((allowed, r) => allowed === run.allowed[r]))?.id
  )
}

/**
 * Notes naming each rule that allowed and denied exactly the requests an earlier rule did.
 *
 * @param runs - each rule's id and decisions, indexed like the requests
 */
export function sameDecisionNotes(
  runs: readonly { id: string; allowed: readonly boolean[] }[]
): string[] {
  return sameDecisionsAs(runs).flatMap((twin, i) =>
    twin ? [`${runs[i]!.id} allowed and denied exactly the requests ${twin} did.`] : []
  )
}

type Table = { headings: string[]; rows: string[][] }

const name = (row: AccuracyRow) => (row.byExecution ? `${row.id} *` : row.id)

function limitTable(rows: readonly AccuracyRow[]): Table {
  return {
    headings: [
      'Rule',
      'Algorithm',
      'Requests',
      'Admitted',
      'Oracle admitted',
      'Difference',
      'Worst over-admission',
      'Worst under-admission',
    ],
    rows: rows.map((row) => {
      const difference = row.allowed - row.oracleAllowed
      return [
        name(row),
        row.algorithm,
        String(row.requests),
        String(row.allowed),
        String(row.oracleAllowed),
        `${signed(difference)} (${signed(difference / Math.max(1, row.oracleAllowed), percent)})`,
        `${units(row.overshoot)} (${percent(row.overshoot / row.limit)})`,
        units(row.agreement.underAdmission),
      ]
    }),
  }
}

function agreementTable(rows: readonly AccuracyRow[]): Table {
  return {
    headings: [
      'Rule',
      'Disagreed',
      'Wrongly allowed',
      'Wrongly denied',
      ...BANDS.map((band) => `Window ${band.label} full`),
      'Keys within the limit',
    ],
    rows: rows.map(({ agreement: a, ...row }) => [
      name(row as AccuracyRow),
      share(disagreements(a.all), a.all.judged),
      String(a.all.wronglyAllowed),
      String(a.all.wronglyDenied),
      ...a.bands.map(bandCell),
      a.keysWithinLimit === 0
        ? 'no such key'
        : `${bandCell(a.withinLimit)}, ${a.keysWithinLimit} of ${a.keys} keys`,
    ]),
  }
}

/** What the measures mean, listed above the tables. */
export const ACCURACY_NOTES = [
  'Oracle: an exact sliding log run on the same requests (admit iff the units it admitted for the key in (t − period, t] plus the cost ≤ limit).',
  'Difference: requests admitted less the oracle’s, and as a share of the oracle’s.',
  'Worst over-admission: the most units one key had admitted in any window (t − period, t], less the limit (0 if never over).',
  'Worst under-admission: the most room (limit − units the rule had admitted in the window) it left when it denied a request that fitted (0 if it never did).',
  'Same history: each decision judged against an exact sliding log of what the rule itself had admitted: would an exact sliding-window limiter with that past have decided otherwise? Comparing with the oracle instead mixes in the drift of two histories once they first differ. Fixed windows and buckets do not promise a sliding window, so their wrongly allowed requests are by design; the sliding-window counter promises to approximate one.',
  'Window bands: how full the rule’s own window was before the request (units in it ÷ limit: [0, 50 %), [50 %, 90 %), [90 %, 100 %), 100 % or more); each cell is the disagreements among the requests in that band.',
  'Keys within the limit: the requests of keys whose traffic never exceeded the limit (the oracle denied none of them), the kind of traffic Cloudflare’s published 0.003 % for its sliding-window counter was mostly made of.',
  'The shaper (*) is judged by execution (arrival + delay: what the origin sees) for what it admitted, and at arrival for what it denied; a denial behind a queue counts as a full window, since denying then is its queue’s policy (`burst`, `maxWait`).',
]

function toMarkdown({ headings, rows }: Table): string {
  const line = (values: string[]) => `| ${values.join(' | ')} |`
  const align = headings.map((_, i) => (isTextColumn(headings, i) ? '---' : '---:'))
  return [line(headings), line(align), ...rows.map(line)].join('\n')
}

/**
 * The tables as Markdown, under a title and the notes.
 *
 * @param rows - one per rule
 * @param notes - extra lines (traffic, identical rules, skipped rules), listed under the tables
 */
export function accuracyMarkdown(rows: readonly AccuracyRow[], notes: readonly string[]): string {
  const extra = notes.length > 0 ? `\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''
  return [
    '# Accuracy against an exact sliding log\n',
    `${ACCURACY_NOTES.map((note) => `- ${note}`).join('\n')}\n`,
    '## Admitted against the exact limit\n',
    `${toMarkdown(limitTable(rows))}\n`,
    '## Decisions judged on the same history\n',
    `${toMarkdown(agreementTable(rows))}\n${extra}`,
    '## Which algorithm fits\n',
    `${toMarkdown(fitTable(rows))}\n`,
  ].join('\n')
}

/**
 * The tables as aligned plain text, for the terminal.
 *
 * @param rows - one per rule
 */
export function accuracyText(rows: readonly AccuracyRow[]): string {
  return [limitTable(rows), agreementTable(rows)].map(toText).join('\n\n')
}

/**
 * Which algorithm fits which need, with this run's numbers, as aligned plain text.
 *
 * @param rows - one per rule
 */
export function whichFitsText(rows: readonly AccuracyRow[]): string {
  return toText(fitTable(rows))
}

function fitTable(rows: readonly AccuracyRow[]): Table {
  return { headings: WHICH_FITS_HEADINGS, rows: whichFits(rows) }
}

function toText(table: Table): string {
  return alignedText(table, (column) => isTextColumn(table.headings, column))
}

/**
 * A table as aligned plain text for the terminal: a heading row, a rule, the rows; words
 * left-aligned, figures right-aligned, two spaces between columns.
 *
 * @param table - its headings and rows (a cell per heading)
 * @param isText - whether a column holds words
 */
export function alignedText(
  { headings, rows }: { headings: readonly string[]; rows: readonly (readonly string[])[] },
  isText: (column: number) => boolean
): string {
  const table = [headings, ...rows]
  const widths = headings.map((_, c) => Math.max(...table.map((r) => r[c]!.length)))
  const format = (r: readonly string[]) =>
    r.map((cell, c) => (isText(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [format(headings), rule, ...rows.map(format)].join('\n').replace(/ +$/gm, '')
}

/** Whether a column holds words (left-aligned) rather than figures. */
function isTextColumn(headings: readonly string[], column: number): boolean {
  if (headings === WHICH_FITS_HEADINGS) return true
  return column === 0 || (column === 1 && headings[1] === 'Algorithm')
}

function bandCell(counts: Tally): string {
  return counts.judged === 0 ? '—' : share(disagreements(counts), counts.judged)
}

function share(n: number, of: number): string {
  return `${percent(n / Math.max(1, of), 3)} (${n} of ${of})`
}

function units(n: number): string {
  return `${n} ${n === 1 ? 'unit' : 'units'}`
}

function signed(n: number, format: (n: number) => string = String): string {
  return n > 0 ? `+${format(n)}` : format(n)
}

function percent(fraction: number, decimals = 2): string {
  const scale = 10 ** (decimals + 2)
  return `${(Math.round(fraction * scale) / 10 ** decimals).toFixed(decimals)}%`
}
