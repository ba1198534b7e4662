/**
 * @module tools/scale/report
 * A run as text: a row of the table the command line prints, and the per-second CSV.
 */
import type { SecondRow } from './metrics'
import type { Summary } from './summary'

const COLUMNS = [
  ['scenario', 9],
  ['mode', 6],
  ['algorithm', 14],
  ['I', 5],
  ['L', 4],
  ['demand', 6],
  ['calls/s', 8],
  ['peak', 7],
  ['overloaded', 10],
  ['over-adm', 8],
  ['early %', 9],
  ['admit %', 7],
  ['win %', 6],
  ['local %', 7],
  ['p50 ms', 6],
  ['p99 ms', 6],
  ['cold ms', 7],
  ['wall s', 6],
] as const

/** The table's heading. */
export function tableHeader(): string {
  return COLUMNS.map(([name, width], i) =>
    i < 3 ? name.padEnd(width) : name.padStart(width)
  ).join(' ')
}

/**
 * A run's row in the table.
 *
 * @param s - the run's summary
 */
export function tableRow(s: Summary): string {
  const cells = [
    s.scenario,
    s.mode,
    s.algorithm,
    String(s.isolates),
    String(s.locations),
    String(s.demand),
    String(Math.round(s.objectCallsPerSecond.mean)),
    String(s.objectCallsPerSecond.peak),
    String(s.overloaded),
    String(s.overAdmitted),
    percent(s.earlyDenialShare, 4),
    percent(s.admittedShare, 1),
    s.windowShare ? percent(s.windowShare.min, 1) : '-',
    percent(s.localShare, 1),
    String(s.latencyMs.p50 ?? '-'),
    String(s.latencyMs.p99 ?? '-'),
    String(s.coldIsolates.waitMs.p99 ?? '-'),
    s.wallSeconds.toFixed(1),
  ]
  return cells
    .map((cell, i) => (i < 3 ? cell.padEnd(COLUMNS[i]![1]) : cell.padStart(COLUMNS[i]![1])))
    .join(' ')
}

/** The CSV's columns: one row per second of the run. */
export const CSV_HEADER =
  'second,demand,admitted,denied,early_denied,over_admitted,ideal_admitted,root_calls,all_calls,' +
  'overloaded,queue_wait_p99_ms,latency_p99_ms,local_share,failed_open'

/**
 * The per-second CSV.
 *
 * @param rows - one per second
 */
export function csvOf(rows: readonly SecondRow[]): string {
  const lines = rows.map((r) =>
    [
      r.second,
      r.demand,
      r.admitted,
      r.denied,
      r.earlyDenied,
      r.overAdmitted,
      r.idealAdmitted,
      r.rootCalls,
      r.allCalls,
      r.overloaded,
      r.queueWaitP99Ms ?? '',
      r.latencyP99Ms ?? '',
      r.localShare === null ? '' : r.localShare.toFixed(4),
      r.failedOpen,
    ].join(',')
  )
  return `${CSV_HEADER}\n${lines.join('\n')}\n`
}

/**
 * A run's file name without extension: `steady-leased-sliding-window-i3000-d1`.
 *
 * @param s - the run's summary
 */
export function fileStem(s: Summary): string {
  const burst = s.burstSeconds === undefined ? '' : `-b${s.burstSeconds}`
  return `${s.scenario}-${s.mode}-${s.algorithm}${burst}-i${s.isolates}-d${s.demand}`
}

function percent(share: number, digits: number): string {
  return (share * 100).toFixed(digits)
}
