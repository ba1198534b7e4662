/**
 * @module tools/rehearse/chart
 * The rehearsal's chart (`minutes.svg`): requests refused per minute under the rules in force
 * and under the proposed ones, and below them those newly denied and newly allowed, drawn with
 * the simulator's ECharts parts (server-side SVG: the same data gives the same bytes).
 */
import { COLOR, LEFT, RIGHT, line, panelTitle, render } from '../simulate/chart-parts'
import type { Report } from './report-types'

/** `HH:MM` (UTC) of a minute, with the date where a day starts. */
function minuteLabel(iso: string, first: boolean): string {
  const time = iso.slice(11, 16)
  return first || time === '00:00' ? `${iso.slice(5, 10)} ${time}` : time
}

/**
 * The chart of a report's minutes.
 *
 * @param report - the rehearsal's report
 */
export function minutesChartSvg(report: Report): string {
  const { minutes, requests: r } = report
  const labels = minutes.map((row, i) => minuteLabel(row.minute, i === 0))
  const step = { step: 'middle', showSymbol: false }
  const tops = [110, 395]
  const heights = [230, 120]
  // One category a minute on both panels: a minute's step above is its bars below.
  const axis = (grid: number, labelled: boolean) => ({
    type: 'category' as const,
    gridIndex: grid,
    data: labels,
    boundaryGap: true,
    axisLabel: { show: labelled },
    axisTick: { show: labelled, alignWithLabel: true },
    splitLine: { show: false },
    ...(labelled ? { name: 'minute (UTC)', nameLocation: 'middle' as const, nameGap: 26 } : {}),
  })
  const bars = (name: string, values: number[], color: string) => ({
    type: 'bar' as const,
    name,
    data: values,
    color,
    xAxisIndex: 1,
    yAxisIndex: 1,
    barMaxWidth: 14,
    emphasis: { disabled: true },
  })
  const subtitle =
    `${report.traffic.files.map((file) => file.name.split('/').pop()).join(', ')} · ${r.total} requests · ` +
    `in force ${report.current}, proposed ${report.proposed}`
  return render(
    {
      title: [
        { text: 'Requests refused per minute', subtext: subtitle, left: 10, top: 8 },
        panelTitle('Refused (429, 403, 400 or degraded): rules in force and proposed', tops[0]!),
        panelTitle(
          `Newly denied ${r.newlyDenied} (${r.newlyDeniedPercent.toFixed(3)}%), newly allowed ${r.newlyAllowed}`,
          tops[1]!
        ),
      ],
      legend: {
        top: 58,
        left: LEFT - 10,
        data: ['in force', 'proposed', 'newly denied', 'newly allowed'],
      },
      grid: tops.map((top, i) => ({ left: LEFT, right: RIGHT, top, height: heights[i] })),
      xAxis: [axis(0, false), axis(1, true)],
      yAxis: tops.map((_, i) => ({
        type: 'value' as const,
        gridIndex: i,
        minInterval: 1,
      })),
      series: [
        line(
          'in force',
          minutes.map((m) => m.deniedCurrent),
          COLOR.admitted,
          0,
          {
            ...step,
            lineStyle: { width: 2 },
            areaStyle: { opacity: 0.12 },
          }
        ),
        line(
          'proposed',
          minutes.map((m) => m.deniedProposed),
          COLOR.denied,
          0,
          {
            ...step,
            lineStyle: { width: 2, type: 'dashed' },
          }
        ),
        bars(
          'newly denied',
          minutes.map((m) => m.newlyDenied),
          COLOR.denied
        ),
        bars(
          'newly allowed',
          minutes.map((m) => m.newlyAllowed),
          COLOR.executed
        ),
      ],
    },
    tops[1]! + heights[1]! + 60
  )
}
