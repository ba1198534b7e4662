/**
 * @module rules/match
 * Which rules apply to a request.
 */
import { BadRequestError } from '../errors'
import type { RequestFacts } from '../types'
import { fieldValue } from './fields'
import type { Matcher, Rule, RuleSet } from './parse'

/**
 * Whether a compiled `match` holds for a request. A rule without `match` matches everything.
 *
 * @param matcher - the rule's compiled matcher
 * @param facts - the request
 * @throws {BadRequestError} when a listed header or query parameter is ambiguous in the request
 *   (read as the key reads it, see `fieldValue`)
 */
export function matches(matcher: Matcher, facts: RequestFacts): boolean {
  if (matcher.methods && !methodMatches(matcher.methods, facts)) return false
  if (matcher.paths && !matcher.paths.some((glob) => glob(facts.path))) return false
  if (matcher.hosts && !matcher.hosts.some((glob) => glob(facts.host))) return false
  if (matcher.fields) {
    for (const { field, values } of matcher.fields) {
      const value = fieldValue(field, facts)
      if (value === undefined || !values.has(value)) return false
    }
  }
  return true
}

/**
 * A method condition holds for the request's own method, and for the method an override
 * header names (the origin may act on either: erring towards counting).
 */
function methodMatches(methods: ReadonlySet<string>, facts: RequestFacts): boolean {
  if (methods.has(facts.method)) return true
  return facts.methodOverride !== undefined && methods.has(facts.methodOverride)
}

/**
 * The rules whose `match` holds for a request, in document order. A rule whose `match` cannot be
 * read unambiguously is included: `planRequest` refuses the request for it (or skips it in
 * shadow).
 *
 * @param ruleSet - the rules in force
 * @param facts - the request
 */
export function matchRules(ruleSet: RuleSet, facts: RequestFacts): Rule[] {
  return ruleSet.rules.filter((rule) => {
    try {
      return matches(rule.match, facts)
    } catch (error) {
      if (error instanceof BadRequestError) return true
      throw error
    }
  })
}
