/**
 * @module tools/simulate/chart-parts
 * What the simulator's charts share: ECharts' server-side SVG renderer (no DOM, no canvas, fixed
 * sizes, no animation, so the same data always gives the same bytes), colours, and the series,
 * marks and axes the charts are built from.
 */
import * as echarts from 'echarts'
import type { Peak } from './windows'

export const WIDTH = 1000
/** Left and right edges of every plot area. */
export const LEFT = 70
export const RIGHT = 40

/** One colour per meaning, the same in every chart. */
export const COLOR = {
  requested: '#a0a0a0',
  admitted: '#2f6db5',
  executed: '#17877a',
  queued: '#f28e2b',
  denied: '#d9383a',
  wait: '#8e5ea2',
  limit: '#555555',
} as const

/**
 * Renders an option to an SVG string.
 *
 * @param option - everything but the size, font, background and animation
 * @param height - in px
 */
export function render(option: echarts.EChartsOption, height: number): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: WIDTH, height })
  try {
    chart.setOption({
      animation: false,
      backgroundColor: '#ffffff',
      textStyle: { fontFamily: 'sans-serif' },
      ...option,
    })
    return `${chart.renderToSVGString()}\n`
  } finally {
    chart.dispose()
  }
}

/**
 * Samples `values[k]` taken at k·stepMs, as [second, value] points. A point equal to both its
 * neighbours is left out: the line is the same, the SVG smaller.
 */
export function sampled(values: readonly number[], stepMs: number): [number, number][] {
  const points: [number, number][] = []
  values.forEach((value, k) => {
    if (value === values[k - 1] && value === values[k + 1]) return
    points.push([(k * stepMs) / 1000, value])
  })
  return points
}

/** Per-second counts as points of a step line: value n covers [n, n + 1). */
export function perSecondPoints(values: readonly number[]): [number, number][] {
  const points = values.map((value, n): [number, number] => [n, value])
  if (values.length > 0) points.push([values.length, values[values.length - 1]!])
  return points
}

/** A line series on one grid. */
export function line(
  name: string,
  data: [number, number][] | number[],
  color: string,
  grid: number,
  extra: object = {}
) {
  return {
    type: 'line' as const,
    name,
    data,
    color,
    xAxisIndex: grid,
    yAxisIndex: grid,
    showSymbol: false,
    lineStyle: { width: 1.5 },
    emphasis: { disabled: true },
    ...extra,
  }
}

/** A label readable over the lines it sits on. */
const onWhite = { backgroundColor: 'rgba(255,255,255,0.85)', padding: [1, 3] }

/** The limit as a dashed line labelled at its right end. */
export function limitMark(limit: number) {
  return {
    silent: true,
    symbol: 'none',
    lineStyle: { color: COLOR.limit, type: 'dashed' as const, width: 1 },
    label: {
      formatter: `limit ${limit}`,
      position: 'insideEndTop' as const,
      color: COLOR.limit,
      ...onWhite,
    },
    data: [{ yAxis: limit }],
  }
}

/**
 * A marker on the fullest window when it exceeds the limit, labelled with the overshoot.
 *
 * @param peak - the fullest window (t in ms)
 * @param limit - the limit it is measured against
 */
export function overshootMark(peak: Peak, limit: number, seconds: number) {
  if (peak.units <= limit) return undefined
  const over = peak.units - limit
  const at = Math.round(peak.t / 10) / 100
  return {
    silent: true,
    symbol: 'circle',
    symbolSize: 9,
    itemStyle: { color: '#ffffff', borderColor: COLOR.denied, borderWidth: 2 },
    label: {
      show: true,
      // Towards the middle, so it stays inside the plot.
      position: 'top' as const,
      align: peak.t / 1000 > seconds * 0.6 ? ('right' as const) : ('left' as const),
      distance: 4,
      ...onWhite,
      color: COLOR.denied,
      fontWeight: 'bold' as const,
      formatter: `${peak.units} at ${at} s: +${over} (${Math.round((over / limit) * 100)} %)`,
    },
    data: [{ coord: [peak.t / 1000, peak.units] }],
  }
}

/** A value x axis in seconds on grid `grid`, from 0 to `seconds`. */
export function timeAxis(grid: number, seconds: number, labelled: boolean) {
  return {
    type: 'value' as const,
    gridIndex: grid,
    min: 0,
    max: seconds,
    axisLabel: { show: labelled },
    axisTick: { show: labelled },
    splitLine: { show: true, lineStyle: { color: '#eeeeee' } },
    ...(labelled ? { name: 'second', nameLocation: 'middle' as const, nameGap: 26 } : {}),
  }
}

/** A panel's heading, placed just above its plot area. */
export function panelTitle(text: string, top: number, subtext = '') {
  return {
    text,
    subtext,
    left: LEFT - 10,
    top: top - 24,
    textStyle: { fontSize: 13, fontWeight: 'normal' as const, color: '#333333' },
    subtextStyle: { fontSize: 12 },
    itemGap: 4,
  }
}

/**
 * The smallest 1, 2 or 5 × 10ⁿ at or above `value`.
 *
 * @param value - a positive number
 */
export function niceCeil(value: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1e-9)))
  return [1, 2, 5, 10].map((m) => m * power).find((nice) => nice >= value)!
}

/**
 * A y axis for window panels: room for what was let through and the limit; requests above
 * 1.5 times that run off the top, so a hot key's demand does not flatten everything else.
 *
 * @param runs - the series drawn on it, with their limits
 */
export function windowAxis(
  runs: readonly {
    requested: readonly number[]
    admitted: readonly number[]
    executed: readonly number[]
    limit: number
  }[]
) {
  const through = Math.max(
    ...runs.flatMap((run) => [run.limit, max(run.admitted), max(run.executed)])
  )
  const requested = Math.max(...runs.map((run) => max(run.requested)))
  const top = Math.max(through, Math.min(requested, through * 1.5)) * 1.05
  const interval = niceCeil(top / 3)
  return { type: 'value' as const, min: 0, max: interval * Math.ceil(top / interval), interval }
}

function max(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), 0)
}
