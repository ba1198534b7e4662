/**
 * @module tools/rehearse/needs
 * What each rule reads of a request, and so which rules recorded traffic can judge: a rule that
 * keys, matches, picks a tier or a cost on something the traffic does not carry (a header the
 * log does not hold, a verified token's claim, the time a request was in flight) is not judged
 * but listed with what it needs, and the requests it may apply to counted apart. Pure.
 */
import { foldHeaderName } from '../../src/rules/fields'
import type { List, Lists } from '../../src/rules/document'
import type { KeyPart, Matcher, Rule, RuleSet } from '../../src/rules/types'
import type { Carried, RequestField } from './records'

/** One thing a rule reads: a request field, a header, or something no log holds. */
export type Need =
  | { kind: 'field'; field: RequestField }
  | { kind: 'header'; name: string }
  | { kind: 'never'; what: string }

/** A rule (or a list) that cannot be judged, and the first thing it needs that is missing. */
export interface Unjudged {
  /** The rule's id, or `lists.allow` / `lists.deny`. */
  rule: string
  /** What it needs, as the report names it (`header:x-api-key`, `ip`, `claim:plan`, …). */
  needs: string
}

/** How a need is named in the report. */
export function needName(need: Need): string {
  if (need.kind === 'field') return need.field
  if (need.kind === 'header') return `header:${need.name}`
  return need.what
}

function partNeeds(part: KeyPart): Need[] {
  switch (part.kind) {
    case 'ip':
    case 'method':
    case 'host':
    case 'path':
    case 'country':
    case 'asn':
      return [{ kind: 'field', field: part.kind }]
    case 'claim':
      return [{ kind: 'never', what: `claim:${part.name} (a verified JWT)` }]
    case 'header':
      return [{ kind: 'header', name: part.name }]
    case 'query':
      return [{ kind: 'field', field: 'query' }]
  }
}

function matchNeeds(match: Matcher): Need[] {
  const needs: Need[] = []
  if (match.methods) needs.push({ kind: 'field', field: 'method' })
  if (match.paths) needs.push({ kind: 'field', field: 'path' })
  if (match.hosts) needs.push({ kind: 'field', field: 'host' })
  for (const { field } of match.fields ?? [])
    needs.push(
      field.kind === 'header'
        ? { kind: 'header', name: field.name }
        : { kind: 'field', field: 'query' }
    )
  return needs
}

/**
 * Everything a rule reads of a request, its match first.
 *
 * @param rule - a compiled rule
 */
export function ruleNeeds(rule: Rule): Need[] {
  const needs = [...matchNeeds(rule.match), ...rule.key.flatMap(partNeeds)]
  if (rule.tiers) {
    const { kind, name } = rule.tiers.from
    needs.push(
      kind === 'header' ? { kind, name } : { kind: 'never', what: `claim:${name} (a verified JWT)` }
    )
  }
  if (typeof rule.cost === 'object') needs.push({ kind: 'header', name: rule.cost.header.name })
  if (rule.countOn) needs.push({ kind: 'field', field: 'status' })
  if (rule.countOn?.costHeader)
    needs.push({ kind: 'never', what: `response header:${rule.countOn.costHeader}` })
  if (rule.policy.algorithm === 'concurrency')
    needs.push({ kind: 'never', what: 'how long each request was in flight' })
  return needs
}

function listNeeds(list: List): Need[] {
  const needs: Need[] = []
  if (list.ips) needs.push({ kind: 'field', field: 'ip' })
  if (list.countries) needs.push({ kind: 'field', field: 'country' })
  if (list.asns) needs.push({ kind: 'field', field: 'asn' })
  for (const name of Object.keys(list.headers ?? {}))
    needs.push({ kind: 'header', name: name.toLowerCase() })
  return needs
}

/**
 * Whether every file of the traffic carries a need. Headers a log holds as it sees them
 * (Logpush's custom fields) count as carried until `seen` says which appeared: after a pass over
 * the traffic, one that no request carried is taken as not logged.
 *
 * @param need - what a rule reads
 * @param files - what each traffic file carries
 * @param seen - header names (folded) some request carried, once known
 */
export function carried(
  need: Need,
  files: readonly Carried[],
  seen?: ReadonlySet<string>
): boolean {
  if (need.kind === 'never') return false
  return files.every((file) => {
    if (need.kind === 'field') return file.fields.has(need.field)
    if (file.headers === 'all') return true
    if (file.headers === 'logged') return seen === undefined || seen.has(foldHeaderName(need.name))
    return [...file.headers].some((name) => foldHeaderName(name) === foldHeaderName(need.name))
  })
}

/**
 * The rules and lists of a document the traffic cannot judge. A rule replaced by one that cannot
 * be judged cannot be either: whether it applies depends on the other.
 *
 * @param ruleSet - the document
 * @param files - what each traffic file carries
 * @param seen - header names (folded) some request carried, once known
 */
export function unjudged(
  ruleSet: RuleSet,
  files: readonly Carried[],
  seen?: ReadonlySet<string>
): Unjudged[] {
  const missing = (needs: Need[]) => needs.find((need) => !carried(need, files, seen))
  const found = new Map<string, string>()
  for (const rule of ruleSet.rules) {
    const need = missing(ruleNeeds(rule))
    if (need) found.set(rule.id, needName(need))
  }
  for (let changed = true; changed;) {
    changed = false
    for (const rule of ruleSet.rules)
      for (const replaced of rule.replaces)
        if (found.has(rule.id) && !found.has(replaced)) {
          found.set(replaced, `${found.get(rule.id)!} (through ${rule.id}, which replaces it)`)
          changed = true
        }
  }
  const rules = ruleSet.rules.flatMap((rule) =>
    found.has(rule.id) ? [{ rule: rule.id, needs: found.get(rule.id)! }] : []
  )
  const lists = (ruleSet.document as { lists?: Lists } | null)?.lists ?? {}
  for (const which of ['allow', 'deny'] as const) {
    const need = lists[which] && missing(listNeeds(lists[which]))
    if (need) rules.push({ rule: `lists.${which}`, needs: needName(need) })
  }
  return rules
}

/**
 * A rule's match with the conditions the traffic cannot read taken as holding: which requests a
 * rule not judged may apply to, as far as the traffic tells.
 *
 * @param match - the rule's compiled match
 * @param files - what each traffic file carries
 */
export function readableMatch(match: Matcher, files: readonly Carried[]): Matcher {
  const has = (field: RequestField) => carried({ kind: 'field', field }, files)
  const readable: Matcher = {}
  if (match.methods && has('method')) readable.methods = match.methods
  if (match.paths && has('path')) {
    readable.paths = match.paths
    if (match.caseSensitive !== undefined) readable.caseSensitive = match.caseSensitive
  }
  if (match.hosts && has('host')) readable.hosts = match.hosts
  const fields = match.fields?.filter(({ field }) =>
    carried(
      field.kind === 'header'
        ? { kind: 'header', name: field.name }
        : { kind: 'field', field: 'query' },
      files
    )
  )
  if (fields && fields.length > 0) readable.fields = fields
  return readable
}
