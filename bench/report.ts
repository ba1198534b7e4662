// Turning measured runs into comparisons with the bare pass-through and a printable table.
import type { CpuShare } from './cpu-usage.ts'
import type { LoadResult } from './load.ts'

/** One measured scenario. */
export interface ScenarioResult extends LoadResult {
  name: string
  cpu?: CpuShare
}

/** The numbers every scenario is compared with: the mean of the bare runs. */
export interface Baseline {
  rps: number
  p50Ms: number
  p99Ms: number
}

/** A scenario relative to the baseline. */
export interface Comparison {
  /** Scenario requests/s divided by bare requests/s. */
  throughputRatio: number
  addedP50Ms: number
  addedP99Ms: number
}

/** Averages the runs of the bare Worker. */
export function baselineOf(bareRuns: ScenarioResult[]): Baseline {
  const mean = (pick: (run: ScenarioResult) => number) =>
    bareRuns.reduce((sum, run) => sum + pick(run), 0) / bareRuns.length
  return {
    rps: mean((run) => run.rps),
    p50Ms: mean((run) => run.p50Ms),
    p99Ms: mean((run) => run.p99Ms),
  }
}

/** How a scenario compares with the baseline. */
export function compare(result: ScenarioResult, baseline: Baseline): Comparison {
  return {
    throughputRatio: result.rps / baseline.rps,
    addedP50Ms: result.p50Ms - baseline.p50Ms,
    addedP99Ms: result.p99Ms - baseline.p99Ms,
  }
}

/** Renders the results as an aligned plain-text table. */
export function formatTable(results: ScenarioResult[], baseline: Baseline): string {
  const header = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'share',
    'errors',
    'x bare',
    '+p50 ms',
    '+p99 ms',
    'cpu% gen/origin/workerd/other',
  ]
  const rows = results.map((result) => {
    const { throughputRatio, addedP50Ms, addedP99Ms } = compare(result, baseline)
    const share = result.requests > 0 ? result.non2xx / result.requests : 0
    const cpu = result.cpu
      ? `${result.cpu.loadgen}/${result.cpu.origin}/${result.cpu.workerd}/${result.cpu.other}`
      : 'n/a'
    return [
      result.name,
      result.rps.toFixed(0),
      result.p50Ms.toFixed(2),
      result.p99Ms.toFixed(2),
      String(result.non2xx),
      `${(share * 100).toFixed(1)}%`,
      String(result.errors),
      throughputRatio.toFixed(2),
      signed(addedP50Ms),
      signed(addedP99Ms),
      cpu,
    ]
  })
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => (row[column] ?? '').length))
  )
  // The first column is text and reads best left-aligned; the rest are numbers.
  const line = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)
      )
      .join('  ')
  const rule = widths.map((width) => '-'.repeat(width)).join('  ')
  return [line(header), rule, ...rows.map(line)].join('\n')
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)}`
}
