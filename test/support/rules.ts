/**
 * @module test/support/rules
 * The problems a rules document is rejected with.
 */
import { expect } from 'vitest'
import { RuleConfigError } from '../../src/errors'
import { parseRules } from '../../src/rules'

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
