import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { problems } from '../support/rules'

const doc = (fields: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  version: 1,
  ...top,
  rules: [
    { id: 'a', key: ['ip'], algorithm: 'sliding-window', limit: 5, period: '1m', ...fields },
    { id: 'b', key: ['ip'], algorithm: 'concurrency', limit: 5 },
  ],
})

describe('placement: locationHint and jurisdiction', () => {
  it("compiles a rule's hint and jurisdiction, the document's jurisdiction for the others", () => {
    const ruleSet = parseRules(
      doc({ locationHint: 'apac-ne', jurisdiction: 'fedramp' }, { jurisdiction: 'eu' }),
      'test'
    )
    expect(ruleSet.rules.map((rule) => rule.placement)).toEqual([
      { locationHint: 'apac-ne', jurisdiction: 'fedramp' },
      { jurisdiction: 'eu' },
    ])
    expect(ruleSet.jurisdiction).toBe('eu')
  })

  it('leaves rules without placement as they were', () => {
    const ruleSet = parseRules(doc({}), 'test')
    expect(ruleSet.rules.map((rule) => 'placement' in rule)).toEqual([false, false])
    expect(ruleSet.jurisdiction).toBeUndefined()
  })

  it('refuses unknown hints and jurisdictions at their field', () => {
    expect(problems(doc({ locationHint: 'mars' }))).toEqual([
      'rules[0].locationHint: "mars" is not a location hint (use one of "wnam", "enam", "sam", "weur", "eeur", "apac", "apac-ne", "apac-se", "oc", "afr", "me")',
    ])
    expect(problems(doc({ jurisdiction: 'EU' }))).toEqual([
      'rules[0].jurisdiction: "EU" is not a jurisdiction (use one of "eu", "fedramp", "fedramp-high", "us")',
    ])
    expect(problems(doc({}, { jurisdiction: 1 }))).toEqual([
      'jurisdiction: 1 is not a jurisdiction (use one of "eu", "fedramp", "fedramp-high", "us")',
    ])
  })
})
