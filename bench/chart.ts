// The bench chart: throughput relative to bare per scenario and limiter (median bars, one dot
// per rep), drawn by Apache ECharts' server-side SVG renderer like tools/simulate's charts.
import * as echarts from 'echarts'
import type { Summary } from './report.ts'

const WIDTH = 1000
const HEIGHT = 560
const FONT = { fontFamily: 'sans-serif' }
const COLORS: Record<string, string> = { project: '#4e79a7', naive: '#f28e2b', peer: '#59a14f' }

/**
 * The chart as an SVG document.
 *
 * @param summaries - the load scenarios' summaries (bare excluded)
 * @param subtitle - what was run
 */
export function ratioChartSvg(summaries: Summary[], subtitle: string): string {
  const measured = summaries.filter((s) => s.skipped === undefined)
  const scenarios = [...new Set(measured.map((s) => s.scenario))]
  const targets = Object.keys(COLORS).filter((t) => measured.some((s) => s.target === t))
  const find = (scenario: string, target: string) =>
    measured.find((s) => s.scenario === scenario && s.target === target)
  const bars = targets.map((target) => ({
    type: 'bar' as const,
    name: target,
    color: COLORS[target],
    barGap: '10%',
    data: scenarios.map((scenario) => round(find(scenario, target)?.throughputRatio)),
    // Inside the bar's foot: at its top a label would sit under the reps' dots.
    label: {
      show: true,
      position: 'insideBottom' as const,
      distance: 6,
      color: '#ffffff',
      fontWeight: 'bold' as const,
      fontSize: 11,
      formatter: ({ value }: { value: unknown }) => `${Number(value).toFixed(2)}×`,
    },
    ...(target === targets[0] ? { markLine: bareLine() } : {}),
  }))
  // With one rep a dot only repeats its bar.
  const manyReps = measured.some((s) => s.repRatios.length > 1)
  const reps = (manyReps ? targets : []).map((target) => ({
    type: 'scatter' as const,
    name: 'each rep',
    color: '#333333',
    symbolSize: 5,
    // Dots sit on their bar: category index plus the bar's offset within the group.
    data: scenarios.flatMap((scenario, index) =>
      (find(scenario, target)?.repRatios ?? []).map((ratio) => [
        index + offset(targets.indexOf(target), targets.length),
        round(ratio),
      ])
    ),
    xAxisIndex: 1,
    tooltip: { show: false },
  }))
  const chart = echarts.init(null, null, {
    renderer: 'svg',
    ssr: true,
    width: WIDTH,
    height: HEIGHT,
  })
  try {
    chart.setOption({
      animation: false,
      backgroundColor: '#ffffff',
      textStyle: FONT,
      title: {
        text: 'Throughput relative to a bare pass-through Worker (higher is better)',
        subtext: subtitle,
        left: 10,
        top: 8,
      },
      legend: {
        top: 14,
        right: 40,
        data: [...targets, ...(manyReps ? [{ name: 'each rep', icon: 'circle' }] : [])],
      },
      grid: { left: 60, right: 30, top: 120, bottom: 50 },
      xAxis: [
        { type: 'category', data: scenarios, axisLabel: { interval: 0 } },
        // An invisible value axis over the same span, for the per-rep dots.
        { type: 'value', min: -0.5, max: scenarios.length - 0.5, show: false },
      ],
      // Not on the dots' axis zero (the first category's middle): at the left edge.
      yAxis: {
        type: 'value',
        name: '× bare req/s',
        min: 0,
        axisLine: { show: true, onZero: false },
      },
      series: [...bars, ...reps],
    })
    return `${chart.renderToSVGString()}\n`
  } finally {
    chart.dispose()
  }
}

function bareLine() {
  return {
    silent: true,
    symbol: 'none',
    lineStyle: { color: '#888888', type: 'dashed' as const },
    label: { formatter: 'bare', position: 'insideEndTop' as const },
    data: [{ yAxis: 1 }],
  }
}

/** Where bar `index` of `count` sits within its category, in category widths. */
function offset(index: number, count: number): number {
  // ECharts' default: the bars share about 80 % of a category less the gaps between them.
  const group = 0.8
  const width = group / (count + (count - 1) * 0.1)
  return -group / 2 + width / 2 + index * width * 1.1
}

function round(value: number | undefined): number | null {
  return value === undefined || Number.isNaN(value) ? null : Math.round(value * 100) / 100
}
