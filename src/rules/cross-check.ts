/**
 * @module rules/cross-check
 * Checks that span fields or rules, which a schema of single fields cannot express.
 */
import { MAX_SLIDING_LOG_LIMIT } from '../algorithms'
import { LEASABLE_ALGORITHMS } from '../algorithms/reserve'
import { actionProblems } from './cross-check-actions'
import { foldHeaderName, foldQueryName } from './fields'
import { messagesProblems } from './messages'
import type { CheckedRule } from './document'

/** The longest a shaped request may be held: a Worker invocation should not wait longer. */
export const MAX_SHAPER_WAIT_MS = 60_000

/** Why an algorithm cannot hand out units in advance. */
const NOT_LEASABLE: Record<string, string> = {
  'sliding-log': 'it records the time of every admitted request',
  'leaky-bucket': 'it meters or delays each request as it comes',
  concurrency: 'its slots are held per request and released',
}

/**
 * Every cross-field problem of the rules, each with the path of the bad field: duplicate ids,
 * `replaces` naming itself, nothing, or forming a cycle (rules that replace each other would
 * leave a request matching both unlimited) or keyed on a value the client chooses freely (see
 * {@link untrustedKeyPart}), tier limits a sliding log cannot hold, leases an algorithm cannot
 * give, a cost header default above its max, a constant cost no request can ever pay, and
 * shaper-only fields.
 *
 * @param rules - the rules after schema validation, `undefined` where a rule failed it (its
 *   other problems are the schema's; the checks that need the whole rule skip it)
 * @param ids - each rule's id as written, for the checks between rules (a rule with a bad
 *   field still has its id taken)
 */
export function crossCheck(
  rules: readonly (CheckedRule | undefined)[],
  ids: readonly unknown[] = rules.map((rule) => rule?.id)
): string[] {
  const problems: string[] = []
  const firstIndex = new Map<string, number>()
  ids.forEach((id, index) => {
    if (typeof id !== 'string') return
    const first = firstIndex.get(id)
    if (first === undefined) firstIndex.set(id, index)
    else
      problems.push(`rules[${index}].id: duplicate id ${JSON.stringify(id)} (also rules[${first}])`)
  })
  rules.forEach((rule, index) => {
    if (rule === undefined) return
    const at = `rules[${index}]`
    if (rule.algorithm === 'leaky-bucket') {
      if (rule.mode !== 'shape' && rule.maxWait !== undefined)
        problems.push(`${at}.maxWait: only a leaky bucket with "mode": "shape" waits`)
      if ((rule.maxWait ?? rule.period) > MAX_SHAPER_WAIT_MS && rule.mode === 'shape')
        problems.push(
          `${at}.maxWait: a shaped request may wait at most 60s (set maxWait, or a shorter period)`
        )
    }
    if (rule.consistency === 'leased' && !LEASABLE_ALGORITHMS.some((a) => a === rule.algorithm))
      problems.push(
        `${at}.consistency: "leased" works with ${LEASABLE_ALGORITHMS.map((a) => `"${a}"`).join(', ')} only, not "${rule.algorithm}" (${NOT_LEASABLE[rule.algorithm]}); use "exact"`
      )
    problems.push(...messagesProblems(rule, at))
    if (rule.algorithm === 'concurrency' && rule.maxWait > MAX_SHAPER_WAIT_MS)
      problems.push(`${at}.maxWait: a queued request may wait at most 60s`)
    if (rule.algorithm === 'sliding-log' && rule.tiers) {
      for (const [tier, limit] of Object.entries(rule.tiers.limits)) {
        if (limit > MAX_SLIDING_LOG_LIMIT)
          problems.push(
            `${at}.tiers.limits.${tier}: ${limit} must be at most ${MAX_SLIDING_LOG_LIMIT} for a sliding log`
          )
      }
    }
    const capacity = 'burst' in rule && rule.burst !== undefined ? rule.burst : rule.limit
    if (typeof rule.cost === 'number' && rule.cost > capacity && !rule.tiers)
      problems.push(`${at}.cost: ${rule.cost} is more than the rule can ever admit (${capacity})`)
    if (typeof rule.cost === 'object' && rule.cost.default > rule.cost.max)
      problems.push(
        `${at}.cost.default: ${rule.cost.default} must be at most max (${rule.cost.max})`
      )
    problems.push(...actionProblems(rule, at))
    rule.replaces?.forEach((id, i) => {
      if (id === rule.id) problems.push(`${at}.replaces[${i}]: a rule cannot replace itself`)
      else if (!firstIndex.has(id))
        problems.push(`${at}.replaces[${i}]: no rule has the id ${JSON.stringify(id)}`)
    })
    if (rule.replaces) {
      for (const part of rule.key) {
        const fix = untrustedKeyPart(part, rule.match)
        if (fix)
          problems.push(
            `${at}.replaces: the key part ${JSON.stringify(part)} is chosen by the client, who could invent values to escape ${rule.replaces.map((id) => JSON.stringify(id)).join(', ')}; ${fix}, or key on ip, cf:country, cf:asn or claim:<name>`
          )
      }
    }
  })
  const cycle = replacesCycle(rules.filter((rule) => rule !== undefined))
  if (cycle)
    problems.push(
      `rules[${firstIndex.get(cycle[0]!)}].replaces: ${cycle.join(' → ')} replace each other in a cycle`
    )
  return problems
}

/**
 * Why a key part cannot let a rule replace others: a replacing rule drops the rules it replaces
 * for every request it applies to, so if the client can pick its key value freely, each new
 * value (`x-api-key: junk1`, `junk2`, …) would be a fresh counter AND no generic counter. A part
 * is trusted when the client cannot choose it (`ip`, `cf:*`, a verified `claim:`), or when
 * `match` lists the values it may take.
 *
 * @returns how to fix it, or `undefined` when the part is trusted
 */
export function untrustedKeyPart(part: string, match: CheckedRule['match']): string | undefined {
  if (part.startsWith('header:')) {
    const name = foldHeaderName(part.slice(7))
    const listed = Object.keys(match?.headers ?? {}).some((h) => foldHeaderName(h) === name)
    return listed ? undefined : `list its accepted values in match.headers`
  }
  if (part.startsWith('query:')) {
    const name = foldQueryName(part.slice(6))
    const listed = Object.keys(match?.query ?? {}).some((q) => foldQueryName(q) === name)
    return listed ? undefined : `list its accepted values in match.query`
  }
  switch (part) {
    case 'method':
      return match?.methods ? undefined : 'list the methods in match.methods'
    case 'host': {
      const hosts = match?.host === undefined ? [] : [match.host].flat()
      return hosts.length > 0 && hosts.every((h) => !h.includes('*'))
        ? undefined
        : 'list exact host names (no "*") in match.host'
    }
    case 'path':
      return 'drop it from the key'
    default:
      return undefined
  }
}

/** A cycle in the `replaces` graph, as ids from its first rule back to it, if there is one. */
function replacesCycle(rules: CheckedRule[]): string[] | undefined {
  // Self-references are reported on their own.
  const edges = new Map(
    rules.map((rule) => [rule.id, (rule.replaces ?? []).filter((id) => id !== rule.id)])
  )
  const done = new Set<string>()
  const walk = (id: string, path: string[]): string[] | undefined => {
    if (path.includes(id)) return [...path.slice(path.indexOf(id)), id]
    if (done.has(id)) return undefined
    for (const next of edges.get(id) ?? []) {
      const found = walk(next, [...path, id])
      if (found) return found
    }
    done.add(id)
    return undefined
  }
  for (const rule of rules) {
    const found = walk(rule.id, [])
    if (found) return found
  }
  return undefined
}
