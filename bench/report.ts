// Turning run records into comparisons with bare (per rep, then the median over reps) and
// printable tables.
import type { RunRecord, TargetName } from './runner.ts'

/** The numbers every run of a rep is compared with: the mean of that rep's bare runs. */
export interface Baseline {
  rps: number
  p50Ms: number
  p99Ms: number
}

/** One scenario on one target over all reps: medians, with each rep's ratio to bare. */
export interface Summary {
  scenario: string
  target: TargetName
  skipped?: string
  reps: number
  rps: number
  /** req/s over the same rep's bare req/s, median over reps. */
  throughputRatio: number
  repRatios: number[]
  addedP50Ms: number
  addedP99Ms: number
  p99Ms: number
  cpuMsPerRequest: number
  durableObjectCallsPerRequest: number
  ownDurableObjectCallsPerRequest?: number
  /** Limiter objects constructed per request: new keys, or objects evicted while idle. */
  objectsStartedPerRequest: number
  non2xxShare: number
  errors: number
  alarms: number
}

/** The bare scenario's name in records. */
export const BARE = 'bare'

/** The mean of each rep's bare runs, by rep. */
export function baselines(records: RunRecord[]): Map<number, Baseline> {
  const byRep = new Map<number, Baseline>()
  for (const rep of new Set(records.map((record) => record.rep))) {
    const runs = records
      .filter((r) => r.rep === rep && r.scenario === BARE && r.measured)
      .map((r) => r.measured!)
    if (runs.length === 0) continue
    const mean = (pick: (run: (typeof runs)[number]) => number) =>
      runs.reduce((sum, run) => sum + pick(run), 0) / runs.length
    byRep.set(rep, {
      rps: mean((r) => r.rps),
      p50Ms: mean((r) => r.p50Ms),
      p99Ms: mean((r) => r.p99Ms),
    })
  }
  return byRep
}

/** One summary per scenario and target that has measured runs (or was skipped). */
export function summarise(records: RunRecord[]): Summary[] {
  const base = baselines(records)
  const groups = new Map<string, RunRecord[]>()
  for (const record of records) {
    const id = `${record.scenario}\u0000${record.target}`
    groups.set(id, [...(groups.get(id) ?? []), record])
  }
  const summaries: Summary[] = []
  for (const group of groups.values()) {
    const first = group[0]!
    const runs = group.filter((r) => r.measured && base.has(r.rep))
    if (runs.length === 0) {
      if (first.skipped !== undefined) summaries.push({ ...empty(first), skipped: first.skipped })
      continue
    }
    const pick = (f: (r: RunRecord) => number) => median(runs.map(f))
    const m = (r: RunRecord) => r.measured!
    const b = (r: RunRecord) => base.get(r.rep)!
    const repRatios = runs.map((r) => m(r).rps / b(r).rps)
    summaries.push({
      scenario: first.scenario,
      target: first.target,
      reps: runs.length,
      rps: pick((r) => m(r).rps),
      throughputRatio: median(repRatios),
      repRatios,
      addedP50Ms: pick((r) => m(r).p50Ms - b(r).p50Ms),
      addedP99Ms: pick((r) => m(r).p99Ms - b(r).p99Ms),
      p99Ms: pick((r) => m(r).p99Ms),
      cpuMsPerRequest: pick((r) => m(r).cpuMsPerRequest ?? Number.NaN),
      durableObjectCallsPerRequest: pick((r) => m(r).durableObjectCallsPerRequest),
      ...(runs.every((r) => m(r).ownDurableObjectCallsPerRequest !== undefined)
        ? { ownDurableObjectCallsPerRequest: pick((r) => m(r).ownDurableObjectCallsPerRequest!) }
        : {}),
      objectsStartedPerRequest: pick((r) => m(r).objectsStartedPerRequest ?? 0),
      non2xxShare: pick((r) => (m(r).requests > 0 ? m(r).non2xx / m(r).requests : 0)),
      errors: pick((r) => m(r).errors),
      alarms: pick((r) => m(r).alarms),
    })
  }
  return summaries
}

function empty(record: RunRecord): Summary {
  const nan = Number.NaN
  return {
    scenario: record.scenario,
    target: record.target,
    reps: 0,
    rps: nan,
    throughputRatio: nan,
    repRatios: [],
    addedP50Ms: nan,
    addedP99Ms: nan,
    p99Ms: nan,
    cpuMsPerRequest: nan,
    durableObjectCallsPerRequest: nan,
    objectsStartedPerRequest: nan,
    non2xxShare: nan,
    errors: nan,
    alarms: nan,
  }
}

/** The load table: one row per scenario and target. */
export function formatSummaryTable(summaries: Summary[]): string {
  const header = [
    'scenario',
    'target',
    'req/s',
    'x bare',
    'reps x bare',
    '+p50 ms',
    '+p99 ms',
    'CPU ms/req',
    'DO calls/req',
    'objects/req',
    'non-2xx',
    'errors',
    'alarms',
  ]
  const rows = summaries.map((s) =>
    s.skipped !== undefined
      ? [s.scenario, s.target, `skipped: ${s.skipped}`]
      : [
          s.scenario,
          s.target,
          s.rps.toFixed(0),
          s.throughputRatio.toFixed(2),
          s.repRatios.map((r) => r.toFixed(2)).join(' '),
          signed(s.addedP50Ms),
          signed(s.addedP99Ms),
          s.cpuMsPerRequest.toFixed(3),
          doCalls(s),
          s.objectsStartedPerRequest.toFixed(3),
          `${(s.non2xxShare * 100).toFixed(1)}%`,
          String(s.errors),
          String(s.alarms),
        ]
  )
  return formatTable(header, rows)
}

/** DO calls per request; the limiter's own count beside it where it reports one. */
function doCalls(s: Summary): string {
  const outside = s.durableObjectCallsPerRequest.toFixed(3)
  return s.ownDurableObjectCallsPerRequest === undefined
    ? outside
    : `${outside} (own ${s.ownDurableObjectCallsPerRequest.toFixed(3)})`
}

/** Scenario details (exactness, alarms) as a table, one row per record. */
export function formatDetailsTable(records: RunRecord[], keys: string[]): string {
  const header = ['scenario', 'target', 'rep', ...keys]
  const rows = records.map((r) =>
    r.skipped !== undefined
      ? [r.scenario, r.target, String(r.rep), `skipped: ${r.skipped}`]
      : [r.scenario, r.target, String(r.rep), ...keys.map((key) => show(r.details?.[key]))]
  )
  return formatTable(header, rows)
}

function show(value: number | string | undefined): string {
  if (value === undefined) return ''
  if (typeof value === 'string') return value
  return Number.isInteger(value) ? String(value) : value.toFixed(3)
}

/** An aligned plain-text table; a row shorter than the header spans the rest of the line. */
export function formatTable(header: string[], rows: string[][]): string {
  // A short row's last cell spans the rest of the line and sets no column's width.
  const widths = header.map((_, column) =>
    Math.max(
      ...[header, ...rows].map((row) =>
        row.length === header.length || column < row.length - 1 ? (row[column] ?? '').length : 0
      )
    )
  )
  // Text columns (the first two) read best left-aligned; the rest are numbers.
  const line = (row: string[]) =>
    row
      .map((cell, column) =>
        column < 2 || row.length < header.length
          ? column === row.length - 1
            ? cell
            : cell.padEnd(widths[column] ?? 0)
          : cell.padStart(widths[column] ?? 0)
      )
      .join('  ')
  const rule = widths.map((width) => '-'.repeat(width)).join('  ')
  return [line(header), rule, ...rows.map(line)].join('\n')
}

/** The median; NaN for none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`
}
