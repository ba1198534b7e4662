import { describe, expect, it } from 'vitest'
import { RuleConfigError } from '../../../src/errors'
import { parseRules } from '../../../src/rules'
import { editDistance, withHint } from '../../../tools/cli/suggest'

/** The validator's problems for a document, each with its hint, as `rules validate` prints them. */
function hinted(document: Record<string, unknown>): string[] {
  try {
    parseRules(document, 'test')
  } catch (error) {
    if (error instanceof RuleConfigError)
      return error.problems.map((problem) => withHint(problem, document))
    throw error
  }
  return []
}

const base = { id: 'r', key: ['ip'], algorithm: 'sliding-window', limit: 5, period: '1m' }

describe('what an unknown field most likely meant', () => {
  it.each([
    [
      { ...base, method: ['POST'] },
      'rules[0]: unknown field "method": did you mean "methods", under "match"?',
    ],
    [{ ...base, methods: ['POST'] }, 'rules[0]: unknown field "methods": it belongs under "match"'],
    [{ ...base, path: '/login' }, 'rules[0]: unknown field "path": it belongs under "match"'],
    [
      { ...base, match: { method: ['POST'] } },
      'rules[0].match: unknown field "method": did you mean "methods"?',
    ],
    [
      { ...base, match: { key: ['ip'] } },
      'rules[0].match: unknown field "key": it belongs beside "match"',
    ],
    [
      { ...base, failmode: 'closed' },
      'rules[0]: unknown field "failmode": did you mean "failMode"?',
    ],
    [
      { ...base, algorithm: 'token-bucket', brust: 5 },
      'rules[0]: unknown field "brust": did you mean "burst"?',
    ],
    [
      { ...base, countOn: { statuses: [401] } },
      'rules[0].countOn: unknown field "statuses": did you mean "status"?',
    ],
    [{ ...base, jwt: {} }, 'rules[0]: unknown field "jwt": it belongs beside "rules"'],
    // An unknown algorithm: the fields of every algorithm are known.
    [
      { ...base, algorithm: 'sliding-windw', bust: 3 },
      'rules[0]: unknown field "bust": did you mean "burst"?',
    ],
  ])('%j', (rule, expected) => {
    expect(hinted({ version: 1, rules: [rule] })).toContain(expected)
  })

  it('reads the document itself', () => {
    expect(hinted({ version: 1, rules: [], rule: [] })).toEqual([
      '(document): unknown field "rule": did you mean "rules"?',
    ])
  })

  it('says nothing where nothing is close', () => {
    expect(hinted({ version: 1, rules: [{ ...base, windw: '1m' }] })).toEqual([
      'rules[0]: unknown field "windw"',
    ])
  })

  it('leaves other problems as they are', () => {
    expect(withHint('rules[0].limit: 0 must be at least 1', {})).toBe(
      'rules[0].limit: 0 must be at least 1'
    )
  })

  it.each([
    ['method', 'methods', 1],
    ['peroid', 'period', 1],
    ['perdio', 'period', 2],
    ['limit', 'limit', 0],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('counts %s to %s as %i edits', (a, b, edits) => {
    expect(editDistance(a, b)).toBe(edits)
  })
})
