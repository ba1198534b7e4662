import { describe, expect, it } from 'vitest'
import { parseRules, responseCost } from '../../src/rules'
import { problems } from '../support/rules'

/** One rule; a field set to `undefined` is left out. */
const rule = (fields: Record<string, unknown>) => ({
  version: 1,
  rules: [
    Object.fromEntries(
      Object.entries({
        id: 'r',
        key: ['ip'],
        algorithm: 'sliding-window',
        limit: 5,
        period: '1m',
        ...fields,
      }).filter(([, value]) => value !== undefined)
    ),
  ],
})
const compiled = (fields: Record<string, unknown>) => parseRules(rule(fields), 't').rules[0]!

describe('countOn and degrade: validation', () => {
  it.each([
    [
      { countOn: {} },
      'rules[0].countOn: needs "status" (which responses count) or "header" (what they cost), or both',
    ],
    [{ countOn: { status: [] } }, 'rules[0].countOn.status: must not be empty'],
    [
      { countOn: { status: [600] } },
      'rules[0].countOn.status[0]: 600 is not a status code (100-599)',
    ],
    [
      { countOn: { status: ['6xx'] } },
      'rules[0].countOn.status[0]: "6xx" is not a status, a class like "5xx" or a range like "500-503"',
    ],
    [
      { countOn: { status: ['503-500'] } },
      'rules[0].countOn.status[0]: "503-500" is not a status, a class like "5xx" or a range like "500-503"',
    ],
    [
      { countOn: { header: 'bad header' } },
      'rules[0].countOn.header: "bad header" is not a header name',
    ],
    [{ countOn: { status: [401], when: 1 } }, 'rules[0].countOn: unknown field "when"'],
    [
      { countOn: { status: [401] }, algorithm: 'leaky-bucket' },
      'rules[0].countOn: counting responses works with "sliding-window", "fixed-window", "token-bucket", "gcra", "sliding-log", not "leaky-bucket"',
    ],
    [
      { countOn: { status: [401] }, consistency: 'leased' },
      'rules[0].countOn: a rule counting responses charges after the origin answers, not from a lease; use "consistency": "exact"',
    ],
    [
      { maxInFlight: 2 },
      'rules[0].maxInFlight: it bounds requests between the check and the charge of a rule with countOn; add countOn or leave it out',
    ],
    [{ countOn: { status: [401] }, maxInFlight: 0 }, 'rules[0].maxInFlight: 0 must be at least 1'],
    [{ action: 'slow' }, 'rules[0].action: "slow" is not "reject" or "degrade"'],
    [
      { action: 'degrade' },
      'rules[0].action: "degrade" needs degradeTo (a path) or "degradeHeader": true',
    ],
    [
      { action: 'degrade', degradeTo: '/lite', degradeHeader: true, match: { path: '/api/*' } },
      'rules[0].degradeHeader: set degradeTo or degradeHeader, not both',
    ],
    [
      { action: 'degrade', degradeTo: '/api/lite', match: { path: '/api/*' } },
      'rules[0].degradeTo: "/api/lite" is matched by the rule\'s own match.path, so degraded requests would be limited by it again; send them outside it',
    ],
    [
      { action: 'degrade', degradeTo: '/lite' },
      'rules[0].degradeTo: "/lite" is matched by the rule\'s own match.path, so degraded requests would be limited by it again; send them outside it',
    ],
    [
      { action: 'degrade', degradeTo: '/lite?x=1', match: { path: '/api/*' } },
      'rules[0].degradeTo: "/lite?x=1" is not a path (start with "/", no "?", "#", "*" or spaces)',
    ],
    [{ degradeTo: '/lite' }, 'rules[0].degradeTo: only a rule with "action": "degrade" degrades'],
    [{ degradeHeader: false }, 'rules[0].degradeHeader: false must be true (or leave it out)'],
    [
      { action: 'degrade', degradeHeader: true, algorithm: 'concurrency', period: undefined },
      'rules[0].action: a concurrency limit cannot degrade (its requests wait in a queue or are refused)',
    ],
    [
      { action: 'degrade', degradeHeader: true, shadow: true },
      'rules[0].action: a rule in shadow never limits, so it never degrades',
    ],
  ])('refuses %j', (fields, message) => {
    expect(problems(rule(fields))).toEqual([message])
  })

  it('compiles status lists, classes and ranges into one test of a response', () => {
    const { countOn } = compiled({ countOn: { status: [401, '5xx', '429-430'] } })
    const counted = [200, 401, 403, 429, 430, 431, 499, 500, 599].filter((s) => countOn!.counts(s))
    expect(counted).toEqual([401, 429, 430, 500, 599])
    expect(compiled({ countOn: { header: 'X-Cost' } }).countOn!.counts(200)).toBe(true)
  })

  it.each([
    [null, 1],
    ['3', 3],
    [' 7 ', 7],
    ['0', 0],
    ['500', 20],
    ['-1', 1],
    ['1.5', 1],
    ['abc', 1],
    ['99999999999', 1],
  ])(
    'charges a response whose cost header says %j %i unit(s) (rule cost 1, capacity 20)',
    (header, cost) => {
      const { countOn } = compiled({ countOn: { header: 'x-cost' } })
      expect(responseCost(countOn!, header, 1, 20)).toBe(cost)
    }
  )
})
