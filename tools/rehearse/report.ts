/**
 * @module tools/rehearse/report
 * The rehearsal's report: its JSON shape, its CSVs (per rule, per minute) and its summary for the
 * terminal. Pure.
 */
import { alignedText } from '../simulate/report'
import type { Carried } from './records'
import type { MinuteRow, Report, RuleRow, TrafficFileRow } from './report-types'

/**
 * A traffic file's row.
 *
 * @param file - its name, format and what it carries
 */
export function fileRow(file: { name: string; format: string; carried: Carried }): TrafficFileRow {
  const { headers } = file.carried
  return {
    name: file.name,
    format: file.format,
    fields: [...file.carried.fields].sort(),
    headers: typeof headers === 'string' ? headers : [...headers].sort(),
  }
}

/**
 * A count of keys, as the summaries say it (`1 key`, `15 keys`).
 *
 * @param n - how many
 */
function keys(n: number): string {
  return `${n} ${n === 1 ? 'key' : 'keys'}`
}

/** A CSV line (RFC 4180 quoting where needed). */
function csvLine(values: readonly (string | number)[]): string {
  return values
    .map((value) => {
      const text = String(value)
      return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
    })
    .join(',')
}

const MINUTE_COLUMNS = [
  'minute',
  'requests',
  'deniedCurrent',
  'deniedProposed',
  'newlyDenied',
  'newlyAllowed',
] as const

/**
 * The minutes as CSV (`minutes.csv`), a row per minute from the first to the last.
 *
 * @param minutes - the report's minutes
 */
export function minutesCsv(minutes: readonly MinuteRow[]): string {
  const rows = minutes.map((row) => csvLine(MINUTE_COLUMNS.map((column) => row[column])))
  return `${[MINUTE_COLUMNS.join(','), ...rows].join('\n')}\n`
}

const RULE_COLUMNS = [
  'id',
  'in',
  'matched',
  'deniedCurrent',
  'deniedProposed',
  'newlyDenied',
  'newlyAllowed',
  'keysAffected',
  'keysNewlyDenied',
] as const

/**
 * The rules as CSV (`rules.csv`); each rule's top keys newly denied as `key count firstAt`, `;`
 * between them.
 *
 * @param rules - the report's rules
 */
export function rulesCsv(rules: readonly RuleRow[]): string {
  const rows = rules.map((row) =>
    csvLine([
      ...RULE_COLUMNS.map((column) => row[column]),
      row.topNewlyDenied.map(({ key, count, firstAt }) => `${key} ${count} ${firstAt}`).join(';'),
    ])
  )
  return `${[[...RULE_COLUMNS, 'topNewlyDenied'].join(','), ...rows].join('\n')}\n`
}

/**
 * The report for the terminal: the traffic, the totals, a row per rule, the keys newly denied
 * most, what was not judged, the notes and the verdict.
 *
 * @param report - the report
 */
export function summaryText(report: Report): string {
  const { requests: r, traffic } = report
  const out: string[] = []
  const span = traffic.from ? ` from ${traffic.from} to ${traffic.to}` : ''
  out.push(`Traffic: ${traffic.files.map((f) => `${f.name} (${f.format})`).join(', ')}${span}.`)
  out.push(
    `Rules in force: ${report.current}; proposed: ${report.proposed}; decided exactly (mode exact).`
  )
  out.push(
    `${r.total} requests: denied ${r.deniedCurrent} now, ${r.deniedProposed} proposed; ` +
      `newly denied ${r.newlyDenied} (${r.newlyDeniedPercent.toFixed(3)}%, ${keys(r.newlyDeniedKeys)}), newly allowed ${r.newlyAllowed}.`,
    ''
  )
  const headings = [
    'rule',
    'in',
    'matched',
    'denied now',
    'denied proposed',
    'newly denied',
    'newly allowed',
    'keys affected',
  ]
  const rows = report.rules.map((row) => [
    row.id,
    row.in,
    ...[
      row.matched,
      row.deniedCurrent,
      row.deniedProposed,
      row.newlyDenied,
      row.newlyAllowed,
      row.keysAffected,
    ].map(String),
  ])
  out.push(alignedText({ headings, rows }, (column) => column < 2))
  const top = report.rules.flatMap((row) =>
    row.topNewlyDenied.slice(0, 5).map((key) => [row.id, key.key, String(key.count), key.firstAt])
  )
  if (top.length > 0) {
    out.push('', 'Keys newly denied most (up to 5 a rule):')
    out.push(
      alignedText({ headings: ['rule', 'key', 'requests', 'first'], rows: top }, (c) => c !== 2)
    )
  }
  if (report.unjudged.length > 0) {
    out.push('', 'Not judged (the traffic lacks what they read; their requests are counted apart):')
    for (const row of report.unjudged)
      out.push(`  ${row.rule} (${row.in}): needs ${row.needs}; ${row.requests} requests may apply`)
  }
  if (report.skipped.count > 0) {
    out.push('', `Skipped ${report.skipped.count} lines (--skip-bad), the first:`)
    for (const line of report.skipped.lines.slice(0, 5))
      out.push(`  ${line.file}:${line.line}: ${line.problem}`)
  }
  if (report.notes.length > 0) out.push('', ...report.notes.map((note) => `note: ${note}`))
  for (const judged of report.verdict ?? [])
    out.push(`${judged.crossed ? 'FAIL' : 'pass'}: ${judged.condition} (measured ${judged.value})`)
  return out.join('\n')
}
