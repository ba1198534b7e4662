import { describe, expect, it } from 'vitest'
import { parseRules } from '../../src/rules'
import { MixOracle } from '../../tools/fuzz-oracle'

const ruleSet = parseRules(
  {
    version: 1,
    rules: [
      { id: 'strict', key: ['ip'], algorithm: 'fixed-window', limit: 2, period: '1d' },
      {
        id: 'lighter',
        key: ['ip'],
        algorithm: 'fixed-window',
        limit: 1,
        period: '1d',
        action: 'degrade',
        degradeHeader: true,
      },
      { id: 'watch', key: [], algorithm: 'token-bucket', limit: 1, period: '1d', shadow: true },
    ],
  },
  'oracle test'
)
const request = () =>
  new Request('https://example.com/a', { headers: { 'cf-connecting-ip': '203.0.113.9' } })
const origin = { status: 200, own: false, degradedBy: null }

describe('the policy-mix oracle', () => {
  it('flags a rule that let more requests reach the origin than its limit, and no rule in shadow', () => {
    const oracle = new MixOracle(ruleSet, 1)
    oracle.note(request(), origin)
    oracle.note(request(), { ...origin, degradedBy: 'lighter' })
    expect(oracle.exceeded(0)).toEqual([])
    oracle.note(request(), { ...origin, degradedBy: 'lighter' })
    expect(oracle.exceeded(0)).toEqual([
      'strict strict|203.0.113.9: 3 requests reached the origin, at most 2',
    ])
  })

  it('asks every rule to have counted what reached the origin (a degrading rule, what it did not degrade)', () => {
    const oracle = new MixOracle(ruleSet, 1)
    oracle.note(request(), origin)
    oracle.note(request(), { ...origin, degradedBy: 'lighter' })
    oracle.note(request(), { status: 429, own: true, degradedBy: null })
    const wanted = oracle.mustHaveCounted(0).map(({ check, atLeast }) => [check.rule.id, atLeast])
    expect(wanted).toEqual([
      ['strict', 2],
      ['lighter', 1],
      ['watch', 1],
    ])
  })
})
