/**
 * @module rules/key
 * Limit keys: which counter a request is charged to.
 */
import { BadRequestError } from '../errors'
import type { RequestFacts } from '../types'
import type { KeyPart, Rule } from './parse'
import { routeOf } from './path'

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
      return pathKeyValue(facts.path, part.fold)
    case 'method':
      return facts.method
    case 'host':
      return facts.host
    case 'country':
      return facts.country
    case 'asn':
      return facts.asn === undefined ? undefined : String(facts.asn)
    case 'header':
      return firstHeaderValue(facts.headers.get(part.name))
    case 'query':
      return onlyQueryValue(part.name, facts.query.getAll(part.name))
  }
}

/**
 * The `path` key part's value: the route (the normalised path without its format suffix, see
 * `routeOf`), lower-cased for a rule that matches without case, so every spelling of one route
 * that the rule matches is counted on one key.
 *
 * @param path - a normalised path (`RequestFacts.path`)
 * @param fold - whether to lower-case it
 */
export function pathKeyValue(path: string, fold: boolean): string {
  const route = routeOf(path)
  return fold ? route.toLowerCase() : route
}

/**
 * A repeated header arrives joined with ", ". Keying on the whole string would let a client mint
 * a new key per request (`x-api-key: REAL` plus `x-api-key: junk1`, `junk2`, …) while an origin
 * that reads the first value still sees REAL; so the key is the first value.
 */
function firstHeaderValue(value: string | null): string | undefined {
  if (value === null) return undefined
  const comma = value.indexOf(',')
  return comma === -1 ? value : value.slice(0, comma).trim()
}

/**
 * Servers disagree on which of several values of a parameter counts (first, last, all), so a
 * repeated keyed parameter cannot be charged safely to any one counter.
 *
 * @throws {BadRequestError} when the parameter appears more than once
 */
function onlyQueryValue(name: string, values: string[]): string | undefined {
  if (values.length > 1) {
    throw new BadRequestError(
      `query:${name}`,
      `The query parameter ${JSON.stringify(name)} appears ${values.length} times; a rate-limit key needs exactly one value.`
    )
  }
  return values[0]
}

/**
 * The limit key of a rule for a request: the rule id and each key part's value, joined by
 * `|` with the values percent-encoded so no value can forge a separator.
 *
 * @param rule - a rule that matched the request
 * @param facts - the request
 * @returns the key, or `undefined` when a key part is absent: the rule then does not apply
 * @throws {BadRequestError} when a key part's value is ambiguous (a repeated query parameter)
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
