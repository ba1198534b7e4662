// What a run leaves: the tables in the terminal, bench/results.json and the chart.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ratioChartSvg } from './chart.ts'
import { costs, formatCostTable } from './cost.ts'
import type { Options } from './options.ts'
import { BARE, formatDetailsTable, formatSummaryTable, summarise } from './report.ts'
import type { RunRecord } from './runner.ts'
import { SCENARIOS } from './scenarios.ts'
import { compatibilityDate } from './targets.ts'

/** Where the chart goes, relative to the root. */
export const CHART = 'docs/bench/bench.svg'

/** One line per record as it completes. */
export function describeRecord(record: RunRecord): string {
  if (record.skipped !== undefined) return `skipped: ${record.skipped}`
  const m = record.measured
  const details = record.details
    ? Object.entries(record.details)
        .map(([key, value]) => `${key} ${typeof value === 'number' ? +value.toFixed(3) : value}`)
        .join(', ')
    : ''
  if (!m) return details
  return `${m.rps.toFixed(0)} req/s, p99 ${m.p99Ms.toFixed(1)} ms, DO calls/req ${m.durableObjectCallsPerRequest.toFixed(3)}, objects started/req ${m.objectsStartedPerRequest.toFixed(3)}, status ${JSON.stringify(m.statusCodes)}${details ? `; ${details}` : ''}`
}

/** Prints the tables and writes bench/results.json and the chart. */
export async function writeReport(
  root: string,
  records: RunRecord[],
  machine: Record<string, unknown>,
  options: Options
): Promise<void> {
  const kindOf = (name: string) => SCENARIOS.find((s) => s.name === name)?.kind ?? 'load'
  const summaries = summarise(records)
  const loadSummaries = summaries.filter((s) => ['load', 'alarms-due'].includes(kindOf(s.scenario)))
  console.log(`\n${formatSummaryTable(loadSummaries)}`)
  console.log(
    "\nx bare = req/s over the same rep's bare req/s (median; each rep after it); +p50/+p99 = latency added over bare;"
  )
  console.log(
    'CPU ms/req = workerd CPU (Worker and objects) per request; DO calls/req = calls through the Durable Object binding, counted outside the limiter ("own" = its /__ratelimit/stats);'
  )
  console.log(
    'objects/req = limiter objects constructed per request: new keys, or objects workerd evicted after 10 s idle (then every call re-creates its object).'
  )
  const detailed = (kind: string, keys: string[]) => {
    const rows = records.filter((r) => kindOf(r.scenario) === kind && r.target !== 'bare')
    if (rows.length > 0) console.log(`\n${formatDetailsTable(rows, keys)}`)
  }
  detailed('exactness', ['admitted', 'limit', 'statuses'])
  detailed('alarms-due', ['periodS', 'keys', 'creationSeconds', 'note'])
  detailed('alarm-cost', [
    'keys',
    'alarms',
    'drainSeconds',
    'alarmsPerSecond',
    'cpuMsPerAlarm',
    'note',
  ])
  const costRows = costs(summaries)
  if (costRows.length > 0)
    console.log(
      `\nUSD per million requests (assumptions in bench/cost.ts):\n${formatCostTable(costRows)}`
    )
  // A limiter answers 200, 429 (or 403/503 by its rules); a 5xx it did not choose is a defect
  // that a throughput number would hide.
  const broken = records.filter((r) =>
    Object.keys(r.measured?.statusCodes ?? {}).some((code) => code === '500' || code === '502')
  )
  for (const r of broken)
    console.log(
      `\nWARNING: ${r.scenario} / ${r.target} (rep ${r.rep}) answered ${JSON.stringify(r.measured?.statusCodes)}: its numbers are not a result`
    )
  const noise = Math.max(...records.map((r) => r.measured?.cpu?.other ?? 0))
  if (noise > 25)
    console.log(
      `\nnote: something else used up to ${noise}% of a core during a run; expect noisy numbers`
    )

  let subtitle = `${options.connections} connections${options.rate ? ` at ${options.rate} req/s` : ''}, ${options.duration} s runs, ${options.reps} rep(s), Durable Object hop ${options.latencyMs} ms; ${machine.cpus} x ${machine.model}${options.quick ? '; --quick: harness check, not a result' : ''}`
  const charted = loadSummaries.filter((s) => s.target !== 'bare' && s.scenario !== BARE)
  const notRun = [...new Set(charted.map((s) => s.scenario))].filter((name) =>
    charted.every((s) => s.scenario !== name || s.skipped !== undefined)
  )
  if (notRun.length > 0) subtitle += `\nnot run (see bench/results.json): ${notRun.join(', ')}`
  await mkdir(join(root, 'docs/bench'), { recursive: true })
  await writeFile(join(root, CHART), ratioChartSvg(charted, subtitle))
  const output = {
    generatedAt: new Date().toISOString(),
    machine,
    options: { ...options, compatibilityDate },
    summaries,
    costs: costRows,
    records,
  }
  // Microsecond precision is plenty and keeps the file readable.
  const rounded = JSON.stringify(
    output,
    (_key, value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value),
    2
  )
  await writeFile(join(root, 'bench/results.json'), `${rounded}\n`)
  console.log(`\nwrote bench/results.json and ${CHART}`)
}
