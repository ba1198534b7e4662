/**
 * @module ui/explain-view
 * "Try a request": `POST <prefix>/explain` with a described request, and what each rule would
 * do with it (keys shown as text, with a reset button each).
 */
import { api } from './api'
import { byId, button, fill, h } from './dom'
import { keyLabel } from './keys'

/** One rule of an explanation. */
interface Explained {
  rule: string
  applies: boolean
  why?: string
  key?: string
  hash?: string
  cost?: number
  shadow?: boolean
  limit?: number
  remaining?: number
  wouldAllow?: boolean
  retryAfterMs?: number
}

/** The description the form holds, as `POST /explain` takes it. */
function description(): Record<string, unknown> {
  const headers: Record<string, string> = {}
  for (const line of byId<HTMLTextAreaElement>('explain-headers').value.split('\n')) {
    const at = line.indexOf(':')
    if (at > 0) headers[line.slice(0, at).trim()] = line.slice(at + 1).trim()
  }
  const ip = byId<HTMLInputElement>('explain-ip').value.trim()
  const country = byId<HTMLInputElement>('explain-country').value.trim()
  return {
    method: byId<HTMLSelectElement>('explain-method').value,
    url: byId<HTMLInputElement>('explain-url').value.trim(),
    headers,
    ...(ip ? { ip } : {}),
    ...(country ? { country } : {}),
  }
}

/**
 * Sends the form's request to `POST /explain` and draws the answer.
 *
 * @param reset - resets a key (rule, stored key), then explains again
 */
export async function runExplain(reset: (rule: string, key: string) => void): Promise<void> {
  const result = byId('explain-result')
  const answer = await api<Record<string, unknown>>('explain', {
    method: 'POST',
    body: JSON.stringify(description()),
  })
  const rules = (Array.isArray(answer.rules) ? answer.rules : []) as Explained[]
  fill(
    result,
    h('p', { class: 'outcome', id: 'explain-outcome' }, outcomeText(answer)),
    rules.length === 0
      ? h('p', { class: 'note' }, 'No rule matches this request.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['rule', 'key', 'remaining', 'would allow', ''].map((t) => h('th', {}, t))
            )
          ),
          h('tbody', {}, ...rules.map((rule) => row(rule, reset)))
        )
  )
}

function outcomeText(answer: Record<string, unknown>): string {
  const outcome = answer.outcome
  if (outcome === 'origin') return 'Outcome: passed to the origin'
  if (outcome === 429) return 'Outcome: 429, limited'
  if (outcome === 403) return 'Outcome: 403, on the deny list'
  return `Outcome: ${String(outcome)}${typeof answer.reason === 'string' ? ` (${answer.reason})` : ''}`
}

function row(rule: Explained, reset: (rule: string, key: string) => void): HTMLElement {
  if (!rule.applies)
    return h(
      'tr',
      { 'data-rule': rule.rule },
      h('td', { class: 'key' }, rule.rule),
      h('td', { colspan: '4', class: 'note' }, `does not apply: ${rule.why ?? ''}`)
    )
  const verdict = rule.wouldAllow
    ? h('span', { class: 'verdict-yes' }, 'yes')
    : h(
        'span',
        { class: 'verdict-no' },
        `no${rule.retryAfterMs ? `, retry in ${Math.ceil(rule.retryAfterMs / 1000)} s` : ''}`
      )
  return h(
    'tr',
    { 'data-rule': rule.rule },
    h('td', { class: 'key' }, rule.rule, rule.shadow ? ' (shadow)' : ''),
    h(
      'td',
      { class: 'key' },
      h('span', { class: 'key-label' }, rule.key ? keyLabel(rule.rule, rule.key) : ''),
      // A rule that hides its keys shows this hash of it in the live view, metrics and alerts.
      rule.hash ? h('div', { class: 'note key-hash' }, `shown as ${rule.hash}`) : ''
    ),
    h('td', {}, `${rule.remaining ?? '?'} of ${rule.limit ?? '?'}`),
    h('td', {}, verdict),
    h('td', {}, rule.key ? button('Reset', () => reset(rule.rule, rule.key!)) : '')
  )
}
