import { describe, expect, it } from 'vitest'
import { RuleConfigError } from '../../src/errors'
import { JSON_BOUNDS, jsonBoundsProblem, parseRules, parseRulesText } from '../../src/rules'
import { problems } from '../support/rules'

/** `{"k":{"k":…1…}}`, `depth` objects deep, as text (building it as a value would recurse). */
const nestedText = (depth: number, key = 'k') =>
  `${`{"${key}":`.repeat(depth)}1${'}'.repeat(depth)}`
const nested = (depth: number, key = 'k'): unknown => JSON.parse(nestedText(depth, key))

describe('jsonBoundsProblem', () => {
  it('takes 32 levels and refuses 33, naming the path', () => {
    expect(jsonBoundsProblem(nested(32))).toBeUndefined()
    expect(jsonBoundsProblem(nested(33))).toBe(`${'k.'.repeat(31)}k: nested deeper than 32 levels`)
    expect(jsonBoundsProblem(JSON.parse('[[[1]]]'), { maxDepth: 2, maxValues: 10 })).toBe(
      '[0][0]: nested deeper than 2 levels'
    )
  })

  it('refuses more values than the bound, without listing a huge array first', () => {
    expect(jsonBoundsProblem({ a: [1, 2, 3] }, { maxDepth: 5, maxValues: 4 })).toBe(
      'a: more than 4 values in all'
    )
    expect(jsonBoundsProblem(new Array(200_000).fill(0))).toBe(
      `(document): more than ${JSON_BOUNDS.maxValues} values in all`
    )
  })

  it('walks 100,000 levels without overflowing the stack', () => {
    expect(jsonBoundsProblem(nested(100_000))).toMatch(/: nested deeper than 32 levels$/)
  })
})

describe('deep and huge rules documents', () => {
  const deepDescriptors = () => {
    let descriptors = '[{"key":"k"}]'
    for (let i = 0; i < 10_000; i++) descriptors = `[{"key":"k","descriptors":${descriptors}}]`
    return `{"version":1,"rules":[],"domains":[{"domain":"d","descriptors":${descriptors}}]}`
  }

  it('refuses a document nested 10,000 levels in its Envoy domains with a RuleConfigError', () => {
    expect(() => parseRulesText(deepDescriptors(), 'kv:rules')).toThrowError(RuleConfigError)
    expect(() => parseRulesText(deepDescriptors(), 'kv:rules')).toThrowError(
      /domains\[0\]\.descriptors\[0\]\.descriptors\[0\].*: nested deeper than 32 levels/
    )
  })

  it('refuses a JWK nested 100,000 levels', () => {
    const text = `{"version":1,"rules":[],"jwt":{"alg":"RS256","publicKey":${nestedText(100_000)}}}`
    expect(() => parseRulesText(text, 't')).toThrowError(
      /jwt\.publicKey\.k(\.k)+: nested deeper than 32 levels/
    )
  })

  it('refuses a rule field nested 10,000 levels and a document of too many values', () => {
    const [deep] = problems(
      JSON.parse(`{"version":1,"rules":[{"id":"r","match":${nestedText(10_000, 'path')}}]}`)
    )
    expect(deep).toMatch(/^rules\[0\]\.match\.path(\.path)+: nested deeper than 32 levels$/)
    expect(problems({ version: 1, rules: new Array(100_001).fill(1) })).toEqual([
      'rules: more than 100000 values in all',
    ])
  })

  it('still takes an ordinary document', () => {
    const ruleSet = parseRules(
      { version: 1, rules: [{ id: 'r', key: [], algorithm: 'fixed-window', limit: 1, period: 1 }] },
      't'
    )
    expect(ruleSet.rules).toHaveLength(1)
  })
})
