/**
 * @module tools/simulate/chart
 * The simulator's charts: one per rule, and a comparison with one panel per rule on shared axes.
 * Windows are sampled finely (every 100 ms for a 1 s period by default), as one-second bins
 * aligned with a fixed window would hide its boundary burst.
 */
import {
  COLOR,
  LEFT,
  RIGHT,
  limitMark,
  line,
  overshootMark,
  panelTitle,
  perSecondPoints,
  render,
  sampled,
  timeAxis,
  windowAxis,
} from './chart-parts'
import type { SecondRow } from './stats'
import type { Peak } from './windows'

/** A rule's run as the charts draw it. */
export interface ChartRun {
  id: string
  /** The algorithm, e.g. `leaky-bucket (shape)`. */
  algorithm: string
  limit: number
  periodMs: number
  /** A shaper: what it admits runs later; its windows are drawn at execution. */
  shaper: boolean
  /** More than one limit key: the window panels show, at each sample, the busiest key. */
  keyed: boolean
  /** One per second, as in the CSV. */
  rows: readonly SecondRow[]
  /** Time between window samples, ms. */
  stepMs: number
  /** Units in the window (t − period, t] at each sample: requested, admitted, executed. */
  requested: readonly number[]
  admitted: readonly number[]
  executed: readonly number[]
  /** The fullest window of what it let through (executed, for a shaper). */
  fullest: Peak
  /** An earlier rule that allowed and denied exactly the same requests. */
  sameAs?: string
}

/**
 * A length of time for labels: `100 ms`, `1 s`, `2.5 s`, `1 min`.
 *
 * @param ms - a positive duration
 */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000 || ms % 60_000 !== 0) return `${ms / 1000} s`
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${ms / 60_000} min`
}

function windowHeading(run: ChartRun): string {
  const busiest = run.keyed ? ', busiest key' : ''
  return `Units in the last ${duration(run.periodMs)}${busiest} (sampled every ${duration(run.stepMs)})`
}

/**
 * One rule's chart. Above: units in the sliding window (requested, admitted or, for a shaper,
 * admitted and executed) against the limit, with the worst overshoot marked. Below: requests per
 * second, admitted and denied stacked (the CSV's rows), and for a shaper its mean wait.
 *
 * @param run - the rule and its series
 * @param subtitle - what was run (rule, traffic)
 * @param scaleWith - the runs whose windows the top panel's scale fits (all of them, so the
 *   charts of one simulation can be compared)
 */
export function ruleChartSvg(
  run: ChartRun,
  subtitle: string,
  scaleWith: readonly ChartRun[] = [run]
): string {
  const seconds = run.rows.length
  const tops = run.shaper ? [125, 415, 585] : [125, 460]
  const heights = run.shaper ? [230, 110, 80] : [270, 150]
  const height = tops.at(-1)! + heights.at(-1)! + 50
  const last = tops.length - 1
  const grids = tops.map((top, i) => ({ left: LEFT, right: RIGHT, top, height: heights[i] }))
  const pick = (field: keyof SecondRow) => run.rows.map((row) => row[field])
  // A shaper's admitted requests queue: orange, apart from the executed line.
  const admittedColor = run.shaper ? COLOR.queued : COLOR.admitted
  const windowed = run.shaper
    ? [
        line('admitted', sampled(run.admitted, run.stepMs), COLOR.queued, 0, {
          lineStyle: { width: 1.5, type: 'dashed' },
        }),
        line('executed', sampled(run.executed, run.stepMs), COLOR.executed, 0, {
          lineStyle: { width: 2 },
          markPoint: overshootMark(run.fullest, run.limit, seconds),
        }),
      ]
    : [
        line('admitted', sampled(run.admitted, run.stepMs), COLOR.admitted, 0, {
          lineStyle: { width: 2 },
          markPoint: overshootMark(run.fullest, run.limit, seconds),
        }),
      ]
  const stacked = { stack: 'requests', step: 'end', lineStyle: { width: 1 } }
  const perSecond = [
    line('admitted', perSecondPoints(pick('success')), admittedColor, 1, {
      ...stacked,
      areaStyle: { opacity: 0.35 },
    }),
    line('denied', perSecondPoints(pick('fail')), COLOR.denied, 1, {
      ...stacked,
      areaStyle: { opacity: 0.35 },
    }),
    ...(run.shaper
      ? [
          line('executed', perSecondPoints(pick('executed')), COLOR.executed, 1, {
            step: 'end',
            lineStyle: { width: 2 },
          }),
          line('mean wait', perSecondPoints(pick('averageExecuteMs')), COLOR.wait, 2, {
            step: 'end',
          }),
        ]
      : []),
  ]
  const panels = [
    windowHeading(run),
    'Requests per second, by arrival second (the CSV rows): admitted + denied = arrived' +
      (run.shaper ? '; executed by execution second' : ''),
    'Mean wait before execution (ms), by execution second',
  ]
  return render(
    {
      title: [
        { text: run.id, subtext: subtitle, left: 10, top: 8 },
        ...tops.map((top, i) => panelTitle(panels[i]!, top)),
      ],
      legend: {
        top: 62,
        left: LEFT - 10,
        data: ['requested', 'admitted', 'denied', ...(run.shaper ? ['executed', 'mean wait'] : [])],
      },
      grid: grids,
      xAxis: tops.map((_, i) => timeAxis(i, seconds, i === last)),
      yAxis: tops.map((_, i) =>
        i === 0
          ? { ...windowAxis(scaleWith), gridIndex: 0 }
          : { type: 'value' as const, gridIndex: i, splitNumber: 3 }
      ),
      series: [
        line('requested', sampled(run.requested, run.stepMs), COLOR.requested, 0, {
          lineStyle: { width: 1 },
          areaStyle: { opacity: 0.12 },
          markLine: limitMark(run.limit),
        }),
        ...windowed,
        ...perSecond,
      ],
    },
    height
  )
}

/**
 * Every rule on one chart, one panel each on the same axes: the units each let through in the
 * sliding window (executed, for a shaper) over what was requested, with its worst overshoot.
 *
 * @param runs - each rule and its series
 * @param subtitle - what was run
 */
export function comparisonChartSvg(runs: readonly ChartRun[], subtitle: string): string {
  const plot = 86
  const pitch = plot + 42
  const first = 112
  const seconds = Math.max(...runs.map((run) => run.rows.length))
  const yAxis = windowAxis(runs)
  const tops = runs.map((_, i) => first + i * pitch)
  const same = new Set(runs.map((run) => windowHeading(run))).size === 1
  const title = same ? windowHeading(runs[0]!) : 'Units in the last period'
  return render(
    {
      title: [
        { text: title, subtext: subtitle, left: 10, top: 8 },
        ...runs.map((run, i) => panelTitle(heading(run), tops[i]!)),
      ],
      legend: {
        top: 60,
        left: LEFT - 10,
        data: ['requested', ...new Set(runs.map((run) => (run.shaper ? 'executed' : 'admitted')))],
      },
      grid: tops.map((top) => ({ left: LEFT, right: RIGHT, top, height: plot })),
      xAxis: runs.map((_, i) => timeAxis(i, seconds, i === runs.length - 1)),
      yAxis: runs.map((_, i) => ({ ...yAxis, gridIndex: i, axisLabel: { fontSize: 11 } })),
      series: runs.flatMap((run, i) => [
        line('requested', sampled(run.requested, run.stepMs), COLOR.requested, i, {
          lineStyle: { width: 1 },
          markLine: limitMark(run.limit),
        }),
        line(
          run.shaper ? 'executed' : 'admitted',
          sampled(run.shaper ? run.executed : run.admitted, run.stepMs),
          run.shaper ? COLOR.executed : COLOR.admitted,
          i,
          {
            lineStyle: { width: 1.8, type: run.shaper ? 'dotted' : 'solid' },
            markPoint: overshootMark(run.fullest, run.limit, seconds),
          }
        ),
      ]),
    },
    tops.at(-1)! + plot + 48
  )
}

/** A panel's heading: the rule, its algorithm if the id does not say it, and its worst window. */
function heading(run: ChartRun): string {
  const algorithm = run.algorithm === run.id ? '' : ` · ${run.algorithm}`
  const over = run.fullest.units - run.limit
  const judged = run.shaper ? ', executed' : ''
  const verdict =
    over > 0
      ? `up to ${run.fullest.units} in one window${judged}, ${over} over the limit of ${run.limit}`
      : `never over the limit of ${run.limit}${judged ? ' by execution' : ''}`
  const twin = run.sameAs === undefined ? '' : ` (same decisions as ${run.sameAs})`
  return `${run.id}${algorithm}: ${verdict}${twin}`
}
