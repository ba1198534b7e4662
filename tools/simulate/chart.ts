/**
 * @module tools/simulate/chart
 * The simulator's charts, drawn by Apache ECharts' server-side SVG renderer (no DOM, no canvas).
 * Fixed sizes and no animation, so the same data always gives the same bytes.
 */
import * as echarts from 'echarts'
import type { SecondRow } from './stats'

const WIDTH = 1000
const HEIGHT = 660
const FONT = { fontFamily: 'sans-serif' }

/** A line per series on second-by-second category axes; everything the two charts share. */
function render(option: echarts.EChartsOption): string {
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: WIDTH,
    height: HEIGHT,
  })
  try {
    chart.setOption({ animation: false, backgroundColor: '#ffffff', textStyle: FONT, ...option })
    return `${chart.renderToSVGString()}\n`
  } finally {
    chart.dispose()
  }
}

function line(name: string, data: number[], color: string, extra: object = {}) {
  return {
    type: 'line' as const,
    name,
    data,
    color,
    showSymbol: false,
    lineStyle: { width: 1.5 },
    ...extra,
  }
}

function limitLine(limit: number) {
  return {
    silent: true,
    symbol: 'none',
    lineStyle: { color: '#888888', type: 'dashed' as const },
    label: { formatter: `limit ${limit}`, position: 'insideEndTop' as const },
    data: [{ yAxis: limit }],
  }
}

/**
 * One rule's chart: requests per second (total, success, fail, executed) above, the average
 * wait before execution below, as seed 004 charted its throttles.
 *
 * @param title - the rule id
 * @param subtitle - what was run (algorithm, limit, traffic)
 * @param rows - one per second
 * @param limit - drawn as a dashed line
 */
export function ruleChartSvg(
  title: string,
  subtitle: string,
  rows: readonly SecondRow[],
  limit: number
): string {
  const seconds = rows.map((r) => String(r.second))
  const axis = { type: 'category' as const, data: seconds, boundaryGap: false }
  return render({
    title: { text: title, subtext: subtitle, left: 10, top: 8 },
    legend: {
      top: 56,
      left: 10,
      data: [
        'TotalRequests',
        'SuccessRequests',
        'FailRequests',
        'ExecutedRequests',
        'AverageExecuteTime',
      ],
    },
    grid: [
      { left: 70, right: 30, top: 115, height: 310 },
      { left: 70, right: 30, top: 485, height: 120 },
    ],
    xAxis: [
      { ...axis, gridIndex: 0 },
      { ...axis, gridIndex: 1, name: 'second', nameLocation: 'middle', nameGap: 25 },
    ],
    yAxis: [
      { type: 'value', gridIndex: 0, name: 'requests / s' },
      { type: 'value', gridIndex: 1, name: 'avg wait (ms)' },
    ],
    series: [
      line('TotalRequests', pick(rows, 'total'), '#9e9e9e'),
      line('FailRequests', pick(rows, 'fail'), '#e15759'),
      line('ExecutedRequests', pick(rows, 'executed'), '#4e79a7', {
        lineStyle: { width: 3 },
        markLine: limitLine(limit),
      }),
      // Drawn over Executed, dashed: without a shaper the two are the same line.
      line('SuccessRequests', pick(rows, 'success'), '#f28e2b', {
        lineStyle: { width: 1.5, type: 'dashed' },
      }),
      line('AverageExecuteTime', pick(rows, 'averageExecuteMs'), '#59a14f', {
        xAxisIndex: 1,
        yAxisIndex: 1,
      }),
    ],
  })
}

/**
 * Executed requests per second of every rule on one chart, over the arrivals.
 *
 * @param subtitle - what was run
 * @param runs - each rule's id and rows
 * @param arrivals - total requests per second (the same for every rule)
 * @param limit - drawn as a dashed line, if the rules share one
 */
export function comparisonChartSvg(
  subtitle: string,
  runs: readonly { id: string; rows: readonly SecondRow[] }[],
  arrivals: readonly number[],
  limit: number | undefined
): string {
  const seconds = arrivals.map((_, second) => String(second))
  const palette = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1']
  return render({
    title: { text: 'Executed requests per second', subtext: subtitle, left: 10, top: 8 },
    legend: { top: 56, left: 10, right: 10 },
    grid: { left: 70, right: 30, top: 115, bottom: 60 },
    xAxis: {
      type: 'category',
      data: seconds,
      boundaryGap: false,
      name: 'second',
      nameLocation: 'middle',
      nameGap: 30,
    },
    yAxis: { type: 'value', name: 'requests / s' },
    series: [
      line('arrivals', [...arrivals], '#bbbbbb', {
        lineStyle: { width: 1, type: 'dotted' },
        ...(limit === undefined ? {} : { markLine: limitLine(limit) }),
      }),
      ...runs.map((run, i) =>
        line(run.id, pick(run.rows, 'executed'), palette[i % palette.length]!)
      ),
    ],
  })
}

function pick(rows: readonly SecondRow[], field: keyof SecondRow): number[] {
  return rows.map((row) => row[field])
}
