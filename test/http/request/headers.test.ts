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
    { check: check(perIp), decision: decision({ remaining: 42, resetAtMs: NOW + 90_500 }) },
    {
      check: check(perKey),
      decision: decision({ limit: 20, remaining: 3, resetAtMs: NOW + 1_700 }),
    },
  ]

  it('describes the rule with the fewest remaining in the legacy headers, and every rule in draft-10', () => {
    expect(Object.fromEntries(rateLimitHeaders(both, NOW, 'both'))).toEqual({
      'X-RateLimit-Limit': '20',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': String(Math.ceil((NOW + 1_700) / 1000)),
      'RateLimit-Policy': '"per-ip";q=100;w=60, "per-key";q=20;w=2',
      RateLimit: '"per-ip";r=42;t=91, "per-key";r=3;t=2',
    })
  })

  it.each([
    ['legacy', ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']],
    ['ietf', ['RateLimit-Policy', 'RateLimit']],
    ['none', []],
  ] as const)('mode %s sends only its family', (mode, names) => {
    expect(rateLimitHeaders(both, NOW, mode).map(([name]) => name)).toEqual(names)
  })

  it('writes RateLimit and RateLimit-Policy that parse back to what was decided, for any rule id and counts', () => {
    const ruleIds = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/)
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            id: ruleIds,
            remaining: fc.nat({ max: 10 ** 12 }),
            resetInMs: fc.nat({ max: 10 ** 12 }),
          }),
          { minLength: 1, maxLength: 4, selector: ({ id }) => id }
        ),
        (rules) => {
          const decisions = rules.map(({ id, remaining, resetInMs }) => ({
            check: { ...check(perIp), rule: { ...perIp, id } },
            decision: decision({ remaining, resetAtMs: NOW + resetInMs }),
          }))
          const headers = Object.fromEntries(rateLimitHeaders(decisions, NOW, 'ietf'))
          const limits = parseList(headers.RateLimit!)
          const policies = parseList(headers['RateLimit-Policy']!)
          rules.forEach(({ id, remaining, resetInMs }, i) => {
            expect(limits[i]![0]).toBe(id)
            expect(limits[i]![1].get('r')).toBe(remaining)
            expect(limits[i]![1].get('t')).toBe(Math.ceil(resetInMs / 1000))
            expect(policies[i]![0]).toBe(id)
            expect(policies[i]![1].get('q')).toBe(100)
          })
        }
      )
    )
  })

  it('sends nothing without decisions', () => {
    expect(rateLimitHeaders([], NOW, 'both')).toEqual([])
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
