/**
 * @module tools/fleet/report
 * A fleet run as a table row (and the simulator's beside it with `--compare`), and its windows.
 */
import type { FleetSummary } from './summary'

/** The fields a fleet run and the simulator's run of the same world both have. */
export type Comparable = Pick<
  FleetSummary,
  'windows' | 'overAdmitted' | 'calls' | 'localShare' | 'latencyMs' | 'errors5xx'
> & { isolateMemoryMb: number | null }

const COLUMNS = [
  ['run', 22],
  ['I', 3],
  ['L', 3],
  ['R', 3],
  ['demand', 6],
  ['root/s', 7],
  ['peak', 5],
  ['region/s', 8],
  ['peak', 5],
  ['loc/s', 6],
  ['peak', 5],
  ['local %', 7],
  ['p50', 4],
  ['p99', 5],
  ['p99.9', 5],
  ['over', 5],
  ['5xx', 4],
  ['503', 5],
  ['open', 5],
  ['mem MB', 6],
  ['back s', 6],
] as const

/** The table's heading. */
export function tableHeader(): string {
  return COLUMNS.map(([name, width], i) =>
    i === 0 ? name.padEnd(width) : name.padStart(width)
  ).join(' ')
}

/**
 * A row of the table.
 *
 * @param label - what ran (`steady`, `simulator`, …)
 * @param s - the fleet's summary (its world's figures)
 * @param figures - the figures to show, the fleet's or the simulator's
 */
export function tableRow(label: string, s: FleetSummary, figures: Comparable = s): string {
  const f = figures
  const fleet = f === s
  const cells = [
    label,
    String(s.isolates),
    String(s.locations),
    String(s.regions),
    String(s.demand),
    String(f.calls.root.mean),
    String(f.calls.root.peak),
    String(f.calls.regional.mean),
    String(f.calls.regional.peak),
    String(f.calls.location.mean),
    String(f.calls.location.peak),
    (f.localShare * 100).toFixed(1),
    String(f.latencyMs.p50 ?? '-'),
    String(f.latencyMs.p99 ?? '-'),
    String(f.latencyMs.p999 ?? '-'),
    String(f.overAdmitted),
    String(f.errors5xx),
    fleet ? String(s.failedClosed) : '-',
    fleet ? String(s.failedOpen) : '-',
    f.isolateMemoryMb === null ? '-' : f.isolateMemoryMb.toFixed(1),
    fleet ? String(s.fault?.recoveredAfterS ?? '-') : '-',
  ]
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(COLUMNS[i]![1]) : cell.padStart(COLUMNS[i]![1])))
    .join(' ')
}

/**
 * The windows as one line: each window's admitted units over what it allows, in per cent.
 *
 * @param figures - a run's windows
 */
export function windowsLine(figures: Pick<Comparable, 'windows'>): string {
  return figures.windows.map((w) => `${((w.admitted / w.allowed) * 100).toFixed(1)}%`).join(' ')
}
