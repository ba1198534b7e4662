/**
 * @module ui/rules-view
 * "Rules in force": which document, where it came from, whether a newer one was refused, and
 * its rules.
 */
import { byId, fill, h } from './dom'

/** `GET <prefix>/rules`. */
export interface RulesState {
  source: string
  inForce: string
  revision: number | null
  updatedAt: string | null
  document: { rules?: Record<string, unknown>[] } & Record<string, unknown>
  rejected?: { source: string; revision: number | null; problems: string[] }
}

/** What each `inForce` value means, for the page. */
const WHERE: Record<string, string> = {
  kv: 'KV (the rules key)',
  'last-good': 'KV, last known good (the rules key is invalid)',
  bundled: 'bundled rules.json',
  static: 'fixed by the application',
}

/** Draws the rules panel. */
export function showRules(state: RulesState): void {
  fill(
    byId('rules-state'),
    ...pair('in force', WHERE[state.inForce] ?? state.inForce),
    ...pair('source', state.source),
    ...pair('revision', state.revision === null ? '—' : String(state.revision)),
    ...pair('updated', state.updatedAt ?? '—'),
    ...pair(
      'validation',
      state.rejected ? 'a newer document was refused (below)' : 'valid, nothing refused'
    ),
    ...pair('rules', String(state.document.rules?.length ?? 0))
  )
  const rejected = byId('rules-rejected')
  if (state.rejected) {
    fill(
      rejected,
      h(
        'p',
        { class: 'error' },
        `Refused: ${state.rejected.source} (revision ${state.rejected.revision ?? '—'})`
      ),
      h('ul', { class: 'errors' }, ...state.rejected.problems.map(problemItem))
    )
  } else fill(rejected)
  const body = byId('rules-table').querySelector('tbody')!
  fill(body, ...(state.document.rules ?? []).map(ruleRow))
}

function pair(name: string, value: string): HTMLElement[] {
  return [h('dt', {}, name), h('dd', {}, value)]
}

function ruleRow(rule: Record<string, unknown>): HTMLElement {
  const match = (rule.match ?? {}) as Record<string, unknown>
  const methods = Array.isArray(match.methods) ? ` ${match.methods.join(',')}` : ''
  const limit = `${text(rule.limit)} / ${text(rule.period)}${rule.burst ? ` (burst ${text(rule.burst)})` : ''}`
  return h(
    'tr',
    {},
    h('td', { class: 'key' }, text(rule.id)),
    h('td', { class: 'key' }, `${text(match.path ?? '*')}${methods}`),
    h('td', { class: 'key' }, Array.isArray(rule.key) ? rule.key.join(' + ') || '(global)' : ''),
    h('td', {}, text(rule.algorithm)),
    h('td', {}, rule.limit === undefined ? text(rule.tiers ? 'tiers' : '') : limit),
    h('td', {}, rule.shadow ? 'shadow' : 'enforced')
  )
}

/** A `"<path>: <message>"` problem as a list item, the path set apart. */
export function problemItem(problem: string): HTMLElement {
  const at = problem.indexOf(': ')
  if (at < 0) return h('li', {}, problem)
  return h('li', {}, h('code', {}, problem.slice(0, at)), problem.slice(at + 2))
}

function text(value: unknown): string {
  if (value === undefined || value === null) return ''
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}
