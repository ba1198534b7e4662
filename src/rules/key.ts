/**
 * @module rules/key
 * Limit keys: which counter a request is charged to.
 */
import * as v from 'valibot'
import type { RequestFacts } from '../types'
import { fieldValue } from './fields'
import type { KeyPart, Rule } from './types'
import { routeOf } from './path'
import { HEADER_NAME, show, text, type Issue } from './schema-parts'

/** Key parts that take no argument. */
const FIXED_KEY_PARTS = ['ip', 'path', 'method', 'host', 'cf:country', 'cf:asn']

/** Key parts a rule may combine, for messages; `header:`, `query:`, `claim:` take a name. */
export const KEY_PARTS = [...FIXED_KEY_PARTS, 'header:<name>', 'query:<name>', 'claim:<name>']

/** One key part as written. */
export const KeyPartSchema = v.pipe(
  text('a key part'),
  v.check(
    (part) =>
      FIXED_KEY_PARTS.includes(part) ||
      (part.startsWith('header:') && HEADER_NAME.test(part.slice(7))) ||
      (part.startsWith('query:') && part.length > 6) ||
      (part.startsWith('claim:') && part.length > 6),
    (i: Issue) => `${show(i.input)} is not a key part (use ${KEY_PARTS.join(', ')})`
  )
)

/**
 * The value of one key part for a request, or `undefined` if the request lacks it.
 *
 * @param part - the compiled key part
 * @param facts - the request
 * @throws {BadRequestError} when a header or query parameter is ambiguous (see `fieldValue`)
 */
export function keyPartValue(part: KeyPart, facts: RequestFacts): string | undefined {
  switch (part.kind) {
    case 'ip':
      return facts.ip
    case 'path':
      return pathKeyValue(facts.path, part.fold)
    case 'method':
      return methodKey(facts)
    case 'host':
      return facts.host
    case 'country':
      return facts.country
    case 'asn':
      return facts.asn === undefined ? undefined : String(facts.asn)
    case 'claim':
      return claimValue(facts.claims?.[part.name])
    case 'header':
    case 'query':
      return fieldValue(part, facts)
  }
}

/** A claim as a key value: a string or a number; anything else counts as absent. */
function claimValue(claim: unknown): string | undefined {
  if (typeof claim === 'string') return claim
  if (typeof claim === 'number' && Number.isFinite(claim)) return String(claim)
  return undefined
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
 * The limit key of a rule for a request: the rule id and each key part's value, joined by
 * `|` with the values percent-encoded so no value can forge a separator.
 *
 * @param rule - a rule that matched the request
 * @param facts - the request
 * @returns the key, or `undefined` when a key part is absent: the rule then does not apply
 * @throws {BadRequestError} when a key part's value is ambiguous (a repeated query parameter,
 *   or two spellings of a header with different values)
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

/**
 * The method a request is counted under: the overriding method if there is one (what the origin
 * acts on), and HEAD as GET, so neither spelling opens a second counter.
 */
function methodKey(facts: RequestFacts): string {
  const method = facts.methodOverride ?? facts.method
  return method === 'HEAD' ? 'GET' : method
}
