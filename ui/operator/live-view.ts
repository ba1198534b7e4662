/**
 * @module ui/live-view
 * "Last 60 minutes": a chart per rule (allowed, limited, shadow-limited, degraded per minute,
 * uPlot) and
 * the top limited keys with a reset button each, from `live` in `GET <prefix>/stats`.
 */
import uPlot from 'uplot'
import { byId, button, fill, h } from './dom'
import { isStoredKey, keyLabel } from './keys'

/** One minute of one rule. */
interface Minute {
  minute: number
  allowed: number
  limited: number
  shadowLimited: number
  /** Absent in the answers of older Workers. */
  degraded?: number
}

/** `live` of `GET <prefix>/stats`. */
export interface Live {
  rules: Record<
    string,
    {
      allowed: number
      limited: number
      shadowLimited: number
      degraded?: number
      minutes: Minute[]
    }
  >
  topLimited: { rule: string; key: string; count: number; retryAfterMs: number }[]
}

const MINUTE_MS = 60_000
const charts = new Map<string, { plot: uPlot; totals: HTMLElement }>()

/**
 * Draws the panel; without `live` (no live view on this deployment, or nothing flushed yet)
 * it says so.
 *
 * @param live - the live view, if the stats have one
 * @param reset - resets a key (rule, stored key)
 */
export function showLive(live: Live | undefined, reset: (rule: string, key: string) => void): void {
  const empty = byId('live-empty')
  const ruleIds = live ? Object.keys(live.rules).sort() : []
  empty.textContent = !live
    ? 'No live data yet: this deployment reports no live view (live in GET /stats).'
    : ruleIds.length === 0
      ? 'No live data yet: no rule has decided a request in the last 60 minutes.'
      : ''
  const container = byId('charts')
  for (const [id, chart] of charts) {
    if (ruleIds.includes(id)) continue
    chart.plot.destroy()
    chart.totals.parentElement?.remove()
    charts.delete(id)
  }
  for (const id of ruleIds) {
    const rule = live!.rules[id]!
    let chart = charts.get(id)
    if (!chart) {
      const totals = h('div', { class: 'totals' })
      const box = h('div', { class: 'chart', 'data-rule': id }, h('h4', {}, id), totals)
      container.appendChild(box)
      const plot = new uPlot(options(chartWidth(container)), series(rule.minutes), box)
      chart = { plot, totals }
      charts.set(id, chart)
    } else chart.plot.setData(series(rule.minutes))
    chart.totals.textContent = `allowed ${rule.allowed} · limited ${rule.limited} · shadow-limited ${rule.shadowLimited}${rule.degraded ? ` · degraded ${rule.degraded}` : ''}`
  }
  const rows = (live?.topLimited ?? []).map((entry) =>
    h(
      'tr',
      {},
      h('td', { class: 'key' }, entry.rule),
      h(
        'td',
        { class: 'key' },
        isStoredKey(entry.rule, entry.key) ? keyLabel(entry.rule, entry.key) : entry.key
      ),
      h('td', {}, String(entry.count)),
      h('td', {}, entry.retryAfterMs > 0 ? `${Math.ceil(entry.retryAfterMs / 1000)} s` : '—'),
      h(
        'td',
        {},
        isStoredKey(entry.rule, entry.key)
          ? button('Reset', () => reset(entry.rule, entry.key))
          : h('span', { class: 'note', title: 'showKeys is off for this rule' }, 'hidden key')
      )
    )
  )
  fill(byId('top-table').querySelector('tbody')!, ...rows)
  byId('top-table').hidden = rows.length === 0
  byId('top-message').textContent =
    live && rows.length === 0 ? 'No key was limited in the last 60 minutes.' : ''
}

/** The width of one chart: the container holds as many of at least 420 px as fit, 16 px apart. */
function chartWidth(container: HTMLElement): number {
  const total = container.getBoundingClientRect().width || 840
  const columns = Math.max(1, Math.floor((total + 16) / 436))
  return Math.floor((total - 16 * (columns - 1)) / columns)
}

function options(width: number): uPlot.Options {
  return {
    width,
    height: 170,
    scales: { x: { time: true } },
    series: [
      {},
      { label: 'allowed', stroke: '#2e7d32', fill: 'rgba(46,125,50,0.08)', width: 1.5 },
      { label: 'limited', stroke: '#c62828', width: 1.5 },
      { label: 'shadow-limited', stroke: '#b45309', dash: [5, 4], width: 1.5 },
      { label: 'degraded', stroke: '#6a1b9a', dash: [2, 3], width: 1.5 },
    ],
    axes: [{}, { size: 44 }],
    legend: { live: false },
  }
}

/** Sixty minutes ending with the current one (or the newest reported), gaps as zeros. */
function series(minutes: Minute[]): uPlot.AlignedData {
  const newest = Math.max(
    Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS,
    ...minutes.map((m) => m.minute)
  )
  const byMinute = new Map(minutes.map((m) => [m.minute, m]))
  const xs: number[] = []
  const columns: number[][] = [[], [], [], []]
  for (let i = 59; i >= 0; i--) {
    const at = newest - i * MINUTE_MS
    const m = byMinute.get(at)
    xs.push(at / 1000)
    columns[0]!.push(m?.allowed ?? 0)
    columns[1]!.push(m?.limited ?? 0)
    columns[2]!.push(m?.shadowLimited ?? 0)
    columns[3]!.push(m?.degraded ?? 0)
  }
  return [xs, ...columns]
}
