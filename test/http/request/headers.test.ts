import fc from 'fast-check'
import { parseList } from 'structured-headers'
import { describe, expect, it } from 'vitest'
import {
  rateLimitHeaders,
  retryAfterSeconds,
  retryHeaders,
  tightest,
} from '../../../src/http/request/headers'
import type { RuleDecision } from '../../../src/http/shared/rule-decision'
import { parseRules, type Rule } from '../../../src/rules'
import type { Decision } from '../../../src/types'

const NOW = 1_700_000_000_000
const [perIp, perKey] = parseRules(
  {
    version: 1,
    rules: [
      { id: 'per-ip', key: ['ip'], algorithm: 'sliding-window', limit: 100, period: '1m' },
      {
        id: 'per-key',
        key: ['header:x-api-key'],
        algorithm: 'token-bucket',
        limit: 10,
        period: '1s',
        burst: 20,
      },
    ],
  },
  't'
).rules as [Rule, Rule]

/** A rule's check as the plan makes it. */
const check = (rule: Rule): RuleDecision['check'] => ({
  rule,
  policy: rule.policy,
  key: `${rule.id}|k`,
  cost: 1,
  shadow: false,
  failMode: 'open',
})

const decision = (fields: Partial<Decision>): Decision => ({
  allowed: true,
  limit: 100,
  remaining: 50,
  resetAtMs: NOW + 30_000,
  retryAfterMs: 0,
  ...fields,
})

describe('rate-limit headers', () => {
  const both: RuleDecision[] = [
    {
      check: check(perIp),
      decision: decision({ remaining: 42, resetAtMs: NOW + 90_500, moreInMs: 1_200 }),
    },
    {
      check: check(perKey),
      decision: decision({ limit: 20, remaining: 3, resetAtMs: NOW + 1_700, moreInMs: 100 }),
    },
  ]

  it('describes the rule with the fewest remaining in the legacy headers, and every rule in draft-11', () => {
    expect(Object.fromEntries(rateLimitHeaders(both, 'both'))).toEqual({
      'X-RateLimit-Limit': '20',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': String(Math.ceil((NOW + 1_700) / 1000)),
      'RateLimit-Policy': '"per-ip";q=100;w=60, "per-key";q=20;w=2',
      // `pk` for the key on the address ("k", base64 "aw=="), not for the one on a header.
      RateLimit: '"per-ip";r=42;t=2;pk=:aw==:, "per-key";r=3;t=1',
    })
  })

  it('gives t as the seconds until more is available, which at r=0 is the Retry-After', () => {
    const denied = decision({
      allowed: false,
      remaining: 0,
      retryAfterMs: 26_001,
      moreInMs: 26_001,
    })
    const limits = (item: Decision) =>
      Object.fromEntries(rateLimitHeaders([{ check: check(perKey), decision: item }], 'ietf'))
        .RateLimit
    expect(limits(denied)).toBe('"per-key";r=0;t=27')
    expect(retryHeaders(denied.retryAfterMs)).toContainEqual(['Retry-After', '27'])
    // A denial the key's object did not explain (the isolate repeating it): its wait.
    expect(limits({ ...denied, moreInMs: undefined })).toBe('"per-key";r=0;t=27')
    // Nothing more to come (a full quota, a concurrency limit), or not known: no t.
    expect(limits(decision({ remaining: 100 }))).toBe('"per-key";r=100')
  })

  it('names the partition with the key values of a rule that shows its keys, as bytes', () => {
    const item = {
      check: { ...check(perIp), key: 'per-ip|2001%3Adb8%3A%3A|GET' },
      decision: decision({ moreInMs: 500 }),
    }
    const headers = Object.fromEntries(rateLimitHeaders([item], 'ietf'))
    const [[, params]] = parseList(headers.RateLimit!) as [[unknown, Map<string, unknown>]]
    expect(new TextDecoder().decode(params.get('pk') as ArrayBuffer)).toBe('2001%3Adb8%3A%3A|GET')
    const global = { ...item, check: { ...item.check, key: 'per-ip' } }
    expect(Object.fromEntries(rateLimitHeaders([global], 'ietf')).RateLimit).toBe(
      '"per-ip";r=50;t=1'
    )
  })

  it.each([
    ['legacy', ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']],
    ['ietf', ['RateLimit-Policy', 'RateLimit']],
    ['none', []],
  ] as const)('mode %s sends only its family', (mode, names) => {
    expect(rateLimitHeaders(both, mode).map(([name]) => name)).toEqual(names)
  })

  it('writes RateLimit and RateLimit-Policy that parse back to what was decided, for any rule id and counts', () => {
    const ruleIds = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/)
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            id: ruleIds,
            remaining: fc.nat({ max: 10 ** 12 }),
            moreInMs: fc.nat({ max: 10 ** 12 }),
          }),
          { minLength: 1, maxLength: 4, selector: ({ id }) => id }
        ),
        (rules) => {
          const decisions = rules.map(({ id, remaining, moreInMs }) => ({
            check: { ...check(perIp), rule: { ...perIp, id } },
            decision: decision({ remaining, moreInMs }),
          }))
          const headers = Object.fromEntries(rateLimitHeaders(decisions, 'ietf'))
          const limits = parseList(headers.RateLimit!)
          const policies = parseList(headers['RateLimit-Policy']!)
          rules.forEach(({ id, remaining, moreInMs }, i) => {
            expect(limits[i]![0]).toBe(id)
            expect(limits[i]![1].get('r')).toBe(remaining)
            expect(limits[i]![1].get('t')).toBe(retryAfterSeconds(moreInMs))
            expect(policies[i]![0]).toBe(id)
            expect(policies[i]![1].get('q')).toBe(100)
          })
        }
      )
    )
  })

  it('sends nothing without decisions', () => {
    expect(rateLimitHeaders([], 'both')).toEqual([])
  })

  it('breaks a tie on remaining by the later reset', () => {
    const a = { check: check(perIp), decision: decision({ remaining: 0, resetAtMs: NOW + 5_000 }) }
    const b = { check: check(perKey), decision: decision({ remaining: 0, resetAtMs: NOW + 9_000 }) }
    expect(tightest([a, b])).toBe(b)
    expect(tightest([b, a])).toBe(b)
  })

  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1_000, 1],
    [1_001, 2],
    [59_999, 60],
  ])('Retry-After for %i ms is %i s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds)
    expect(retryHeaders(ms)).toEqual([
      ['Retry-After', String(seconds)],
      ['X-RateLimit-Retry-After', String(seconds)],
    ])
  })
})
