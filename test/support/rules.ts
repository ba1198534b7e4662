/**
 * @module test/support/rules
 * The problems a rules document is rejected with, and which rules match a request.
 */
import { expect } from 'vitest'
import { RuleConfigError } from '../../src/errors'
import { parseRules, type Rule, type RuleSet } from '../../src/rules'
import { matches, pathView } from '../../src/rules/match'
import type { RequestFacts } from '../../src/types'

/**
 * The rules whose `match` holds for a request, in document order.
 *
 * @param ruleSet - the rules
 * @param facts - the request
 * @throws {BadRequestError} where a rule's match cannot be read unambiguously
 */
export function matchRules(ruleSet: RuleSet, facts: RequestFacts): Rule[] {
  const view = pathView(facts.path)
  return ruleSet.rules.filter((rule) => matches(rule.match, facts, view))
}

/**
 * Parses `input` and returns every problem reported; fails the test if it is accepted.
 *
 * @param input - a whole document
 */
export function problems(input: unknown): readonly string[] {
  try {
    parseRules(input, 'test')
  } catch (error) {
    expect(error).toBeInstanceOf(RuleConfigError)
    return (error as RuleConfigError).problems
  }
  throw new Error('expected the document to be rejected')
}

/** {@link problems} of `{ version: 1, ...fields }`. */
export const documentProblems = (fields: Record<string, unknown>) =>
  problems({ version: 1, ...fields })
