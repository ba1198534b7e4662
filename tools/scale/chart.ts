/**
 * @module tools/scale/chart
 * One chart per run, second by second, in five panels: requests (arrived, admitted, what the
 * exact limit would have admitted, let through undecided), the key's root object (calls and
 * "overloaded" answers against the documented soft limit), waits (decision latency and queue
 * wait, p99), how decisions were taken (in the isolate), and errors (early denials,
 * over-admissions). Drawn with the simulator's shared ECharts parts.
 */
import {
  COLOR,
  LEFT,
  RIGHT,
  line,
  panelTitle,
  perSecondPoints,
  render,
  timeAxis,
} from '../simulate/chart-parts'
import type { SecondRow } from './metrics'
import type { Summary } from './summary'

/** One Durable Object's documented soft limit (requests per second). */
const SOFT_LIMIT = 1000

/**
 * The chart of a run.
 *
 * @param s - the run's summary (the title)
 * @param rows - its seconds
 */
export function scaleChartSvg(s: Summary, rows: readonly SecondRow[]): string {
  const seconds = rows.length
  const plot = 110
  const pitch = plot + 58
  const tops = [0, 1, 2, 3, 4].map((i) => 150 + i * pitch)
  const pick = (field: keyof SecondRow, scale = 1) =>
    perSecondPoints(rows.map((row) => Number(row[field] ?? 0) * scale))
  const step = (extra: object = {}) => ({ step: 'end', ...extra })
  // The soft limit is drawn when the object's load comes anywhere near it.
  const calls = Math.max(...rows.map((row) => row.rootCalls))
  const busy = calls >= SOFT_LIMIT / 4
  const panels = [
    'Requests per second',
    `The key's object: calls reaching it per second (dashed, when near: the soft limit of ${SOFT_LIMIT}/s)`,
    'Waits (ms, p99 of each second)',
    'Decided in the isolate with no awaited call (% of decisions)',
    'Denied while the exact limit had room, and admitted beyond it (per second)',
  ]
  const soft = {
    silent: true,
    symbol: 'none',
    lineStyle: { color: COLOR.limit, type: 'dashed' as const, width: 1 },
    label: { show: false },
    data: [{ yAxis: SOFT_LIMIT }],
  }
  return render(
    {
      title: [
        {
          text:
            `${s.scenario} · ${s.mode} · ${s.algorithm}` +
            (s.burstSeconds === undefined ? '' : ` (burst ${s.burstSeconds} s)`) +
            `: ${s.isolates} isolates, ${s.locations} locations, demand ${s.demand} × the limit`,
          subtext: subtitle(s),
          left: 10,
          top: 8,
        },
        ...tops.map((top, i) => panelTitle(panels[i]!, top)),
      ],
      legend: {
        top: 88,
        left: LEFT - 10,
        right: RIGHT,
        data: [
          'arrived',
          'admitted',
          'exact limit admits',
          'let through undecided',
          'calls',
          'overloaded',
          'decision latency',
          'queue wait',
          'local',
          'early denials',
          'over-admitted',
        ],
      },
      grid: tops.map((top) => ({ left: LEFT, right: RIGHT, top, height: plot })),
      xAxis: tops.map((_, i) => timeAxis(i, seconds, i === tops.length - 1)),
      yAxis: tops.map((_, i) => ({
        type: 'value' as const,
        gridIndex: i,
        splitNumber: 3,
        ...(i === 3 ? { min: 0, max: 100 } : {}),
        // Room for the soft limit's line when the calls stay under it; a round top above it.
        ...(i === 1 && busy ? { max: roundUp(Math.max(calls, SOFT_LIMIT * 1.2)) } : {}),
      })),
      series: [
        line('arrived', pick('demand'), COLOR.requested, 0, step({ lineStyle: { width: 1 } })),
        line('admitted', pick('admitted'), COLOR.admitted, 0, step({ lineStyle: { width: 2 } })),
        line('exact limit admits', pick('idealAdmitted'), COLOR.limit, 0, {
          ...step(),
          lineStyle: { width: 1, type: 'dashed' },
        }),
        line('let through undecided', pick('failedOpen'), COLOR.queued, 0, step()),
        line('calls', pick('rootCalls'), COLOR.executed, 1, step(busy ? { markLine: soft } : {})),
        line('overloaded', pick('overloaded'), COLOR.denied, 1, step()),
        line('decision latency', pick('latencyP99Ms'), COLOR.wait, 2, step()),
        line('queue wait', pick('queueWaitP99Ms'), COLOR.queued, 2, step()),
        line('local', pick('localShare', 100), COLOR.admitted, 3, step()),
        line('early denials', pick('earlyDenied'), COLOR.denied, 4, step()),
        line('over-admitted', pick('overAdmitted'), '#000000', 4, step()),
      ],
    },
    tops.at(-1)! + plot + 50
  )
}

/** The next multiple of the leading digit's power of ten: 28,085 → 30,000. */
function roundUp(value: number): number {
  const step = 10 ** Math.floor(Math.log10(value))
  return Math.ceil(value / step) * step
}

function subtitle(s: Summary): string {
  const pct = (share: number, digits: number) => `${(share * 100).toFixed(digits)} %`
  const undecided = s.requests > 0 ? s.failedOpen / s.requests : 0
  return (
    `the key's object: ${Math.round(s.objectCallsPerSecond.mean)} calls/s (peak ${s.objectCallsPerSecond.peak}), ` +
    `${s.overloaded} overloaded · let through undecided ${pct(undecided, 1)} · ` +
    `over-admitted ${s.overAdmitted} · early denials ${pct(s.earlyDenialShare, 4)}\n` +
    `admitted ${pct(s.admittedShare, 1)} of what the exact limit admits` +
    (s.windowShare
      ? ` (each whole window after the first: at least ${pct(s.windowShare.min, 1)})`
      : '') +
    `\nlocal ${pct(s.localShare, 1)} · ` +
    `latency p50 ${s.latencyMs.p50} ms, p99 ${s.latencyMs.p99} ms` +
    (s.recoverySeconds === null ? '' : ` · back to 99 % ${s.recoverySeconds} s after the shift`) +
    ` · ${s.seconds} s (the first ${s.warmupSeconds} left out of rates) · seed ${s.seed}`
  )
}
