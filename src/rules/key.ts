/**
 * @module rules/key
 * Limit keys: which counter a request is charged to.
 */
import type { RequestFacts } from '../types'
import type { KeyPart, Rule } from './parse'

/**
 * The value of one key part for a request, or `undefined` if the request lacks it.
 *
 * @param part - the compiled key part
 * @param facts - the request
 */
export function keyPartValue(part: KeyPart, facts: RequestFacts): string | undefined {
  switch (part.kind) {
    case 'ip':
      return facts.ip
    case 'path':
      return facts.path
    case 'method':
      return facts.method
    case 'host':
      return facts.host
    case 'country':
      return facts.country
    case 'asn':
      return facts.asn === undefined ? undefined : String(facts.asn)
    case 'header':
      return facts.headers.get(part.name) ?? undefined
    case 'query':
      return facts.query.get(part.name) ?? undefined
  }
}

/**
 * The limit key of a rule for a request: the rule id and each key part's value, joined by
 * `|` with the values percent-encoded so no value can forge a separator.
 *
 * @param rule - a rule that matched the request
 * @param facts - the request
 * @returns the key, or `undefined` when a key part is absent: the rule then does not apply
 * @example limitKey(rule, facts) // "api-per-ip|203.0.113.7"
 */
export function limitKey(rule: Rule, facts: RequestFacts): string | undefined {
  let key = rule.id
  for (const part of rule.key) {
    const value = keyPartValue(part, facts)
    if (value === undefined) return undefined
    key += `|${encodeURIComponent(value)}`
  }
  return key
}
