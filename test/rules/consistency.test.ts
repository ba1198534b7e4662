import { describe, expect, it } from 'vitest'
import { parseRules, planRequest } from '../../src/rules'
import type { RequestFacts } from '../../src/types'
import { documentProblems } from '../support/rules'

const rule = (algorithm: string, fields: Record<string, unknown> = {}) => ({
  id: 'r',
  key: [],
  algorithm,
  limit: 5,
  ...(algorithm === 'concurrency' ? {} : { period: '1m' }),
  ...fields,
})

const facts: RequestFacts = {
  method: 'GET',
  host: 'api.example.com',
  path: '/x',
  query: new URLSearchParams(),
  headers: new Headers(),
}

describe('the consistency field', () => {
  it.each(['sliding-window', 'token-bucket', 'fixed-window', 'gcra'])(
    'leases %s, and the plan carries it to the check',
    (algorithm) => {
      const ruleSet = parseRules(
        { version: 1, rules: [rule(algorithm, { consistency: 'leased' })] },
        't'
      )
      expect(ruleSet.rules[0]!.consistency).toBe('leased')
      const plan = planRequest(ruleSet, facts)
      expect(plan.action === 'limit' && plan.checks[0]!.consistency).toBe('leased')
    }
  )

  it('is exact by default', () => {
    const ruleSet = parseRules({ version: 1, rules: [rule('sliding-window')] }, 't')
    expect(ruleSet.rules[0]!.consistency).toBe('exact')
  })

  it.each([
    ['sliding-log', 'it records the time of every admitted request'],
    ['leaky-bucket', 'it meters or delays each request as it comes'],
    ['concurrency', 'its slots are held per request and released'],
  ])('refuses to lease %s, at rules[i].consistency', (algorithm, why) => {
    expect(
      documentProblems({
        rules: [rule('gcra'), rule(algorithm, { id: 'b', consistency: 'leased' })],
      })
    ).toEqual([
      `rules[1].consistency: "leased" works with "sliding-window", "token-bucket", "fixed-window", "gcra" only, not "${algorithm}" (${why}); use "exact"`,
    ])
  })

  it('refuses any other value', () => {
    expect(documentProblems({ rules: [rule('gcra', { consistency: 'eventual' })] })).toEqual([
      'rules[0].consistency: "eventual" is not "exact" or "leased"',
    ])
  })
})
