/**
 * @module ui/rehearse-view
 * "Rehearse" in the rules editor: traffic dropped on the page (or chosen) is replayed through the
 * rules in force and the editor's rules, in a worker (`rehearse-worker.ts`, loaded only then),
 * and the answer drawn before anything is saved: the totals, a chart of requests refused per
 * minute under each, a row per rule, and what could not be judged.
 */
import uPlot from 'uplot'
import type { Report, RuleRow } from '../../tools/rehearse/report-types'
import { byId, fill, h } from './dom'
import type { RehearseAnswer, RehearseAsk } from './rehearse-messages'

let files: File[] = []
let worker: Worker | undefined
let chart: uPlot | undefined

/**
 * Wires the drop zone, the file input and the button.
 *
 * @param inForce - the document in force, as last read from the admin API
 */
export function initRehearse(inForce: () => unknown): void {
  const zone = byId('rehearse-drop')
  zone.addEventListener('dragover', (event) => {
    event.preventDefault()
    zone.classList.add('over')
  })
  zone.addEventListener('dragleave', () => zone.classList.remove('over'))
  zone.addEventListener('drop', (event) => {
    event.preventDefault()
    zone.classList.remove('over')
    choose([...(event.dataTransfer?.files ?? [])])
  })
  const input = byId<HTMLInputElement>('rehearse-files')
  input.addEventListener('change', () => choose([...(input.files ?? [])]))
  byId('rehearse').addEventListener('click', () => start(inForce()))
}

function choose(chosen: File[]): void {
  files = chosen
  const size = chosen.reduce((sum, file) => sum + file.size, 0)
  const shown =
    size < 2 ** 20 ? `${(size / 2 ** 10).toFixed(1)} KiB` : `${(size / 2 ** 20).toFixed(1)} MiB`
  byId('rehearse-chosen').textContent =
    chosen.length === 0 ? '' : `${chosen.map((file) => file.name).join(', ')} (${shown})`
  byId<HTMLButtonElement>('rehearse').disabled = chosen.length === 0
}

function start(current: unknown): void {
  worker?.terminate()
  const panel = byId('rehearse-panel')
  panel.hidden = false
  status('Reading the traffic…')
  // Nothing of an earlier rehearsal stays beside this one's progress or failure.
  chart?.destroy()
  chart = undefined
  fill(byId('rehearse-extra'))
  fill(byId('rehearse-table').querySelector('tbody')!)
  byId('rehearse-table').hidden = true
  worker = new Worker('ui/rehearse.js')
  worker.onmessage = (event: MessageEvent<RehearseAnswer>) => answered(event.data)
  worker.onerror = (event) => status(`The rehearsal stopped: ${event.message}`, true)
  const ask: RehearseAsk = {
    current,
    proposed: byId<HTMLTextAreaElement>('rules-doc').value,
    files,
    skipBad: byId<HTMLInputElement>('rehearse-skip-bad').checked,
  }
  worker.postMessage(ask)
}

function answered(answer: RehearseAnswer): void {
  if (answer.kind === 'progress') {
    const at = new Date(answer.atMs).toISOString().slice(0, 19).replace('T', ' ')
    status(`Replayed ${answer.requests.toLocaleString('en-US')} requests, up to ${at} UTC…`)
    return
  }
  worker?.terminate()
  worker = undefined
  if (answer.kind === 'error') {
    status(`Not rehearsed: ${answer.message}`, true)
    fill(
      byId('rehearse-extra'),
      answer.problems.length > 0 &&
        h('ul', { class: 'errors' }, ...answer.problems.map((problem) => h('li', {}, problem)))
    )
    return
  }
  show(answer.report)
}

function status(text: string, isError = false): void {
  const element = byId('rehearse-status')
  element.textContent = text
  element.className = isError ? 'outcome error' : 'outcome'
}

/** Draws a report. */
function show(report: Report): void {
  const r = report.requests
  const span = report.traffic.from ? ` from ${report.traffic.from} to ${report.traffic.to}` : ''
  status(
    `${r.total.toLocaleString('en-US')} requests${span}: newly denied ${r.newlyDenied} ` +
      `(${r.newlyDeniedPercent.toFixed(3)}%, ${r.newlyDeniedKeys} ${r.newlyDeniedKeys === 1 ? 'key' : 'keys'}), newly allowed ${r.newlyAllowed}. ` +
      'Nothing is saved until "Validate and save".'
  )
  drawChart(report)
  fill(byId('rehearse-table').querySelector('tbody')!, ...report.rules.map(ruleRow))
  byId('rehearse-table').hidden = false
  const extra: (HTMLElement | false)[] = [
    report.unjudged.length > 0 &&
      h(
        'div',
        { id: 'rehearse-unjudged' },
        h('h3', {}, 'Not judged: the traffic lacks what they read'),
        h(
          'ul',
          {},
          ...report.unjudged.map((row) =>
            h(
              'li',
              {},
              h('code', {}, row.rule),
              ` (${row.in}) needs ${row.needs}; ${row.requests} requests may apply`
            )
          )
        )
      ),
    report.skipped.count > 0 &&
      h(
        'p',
        { class: 'note' },
        `Skipped ${report.skipped.count} lines, the first: ` +
          report.skipped.lines
            .slice(0, 3)
            .map((line) => `${line.file}:${line.line}: ${line.problem}`)
            .join('; ')
      ),
    ...report.notes.map((note) => h('p', { class: 'note' }, note)),
  ]
  fill(byId('rehearse-extra'), ...extra)
}

function ruleRow(row: RuleRow): HTMLTableRowElement {
  const top = row.topNewlyDenied[0]
  return h(
    'tr',
    { 'data-rule': row.id },
    h('td', { class: 'key' }, row.id),
    h('td', { class: 'n' }, row.in),
    ...[row.matched, row.deniedCurrent, row.deniedProposed].map((n) =>
      h('td', { class: 'n' }, String(n))
    ),
    h('td', { class: row.newlyDenied > 0 ? 'n verdict-no' : 'n' }, String(row.newlyDenied)),
    h('td', { class: 'n' }, String(row.newlyAllowed)),
    h('td', { class: 'n' }, String(row.keysAffected)),
    h('td', { class: 'key' }, top ? `${top.key} × ${top.count}, first ${top.firstAt}` : '—')
  )
}

function drawChart(report: Report): void {
  chart?.destroy()
  const box = byId('rehearse-chart')
  const xs = report.minutes.map((m) => Date.parse(m.minute) / 1000)
  const column = (field: 'deniedCurrent' | 'deniedProposed' | 'newlyDenied' | 'newlyAllowed') =>
    report.minutes.map((m) => m[field])
  chart = new uPlot(
    {
      width: Math.max(320, Math.floor(box.getBoundingClientRect().width || 900)),
      height: 220,
      // The report's minutes are UTC; so is the axis.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      // A minute on either side, so that a rehearsal of one minute still spans two.
      scales: { x: { time: true, auto: false, range: [(xs[0] ?? 0) - 60, (xs.at(-1) ?? 0) + 60] } },
      series: [
        {},
        {
          label: 'refused, in force',
          stroke: '#2f6db5',
          fill: 'rgba(47,109,181,0.10)',
          width: 1.5,
        },
        { label: 'refused, proposed', stroke: '#d9383a', dash: [6, 4], width: 1.5 },
        { label: 'newly denied', stroke: '#8b1a1a', width: 2 },
        { label: 'newly allowed', stroke: '#17877a', width: 1.5 },
      ],
      axes: [{}, { size: 48 }],
      legend: { live: false },
    },
    [
      xs,
      column('deniedCurrent'),
      column('deniedProposed'),
      column('newlyDenied'),
      column('newlyAllowed'),
    ],
    box
  )
}
