import { describe, expect, it } from 'vitest'
import { envoyResponse, planEnvoy, type EnvoySlot } from '../../../src/rules/envoy/decide'
import { MAX_UINT32 } from '../../../src/rules/envoy/units'
import type { Decision } from '../../../src/types'
import { compileDomain as compile, entry as e, rateLimitOf as rl } from '../../support/envoy'

/** 2026-01-01T10:00:30.250Z: 30.25 s into a minute, 36,030.25 s into a day. */
const NOW = Date.UTC(2026, 0, 1, 10, 0, 30, 250)

const domains = compile('d', [
  { key: 'minute', ...rl(5, 'minute', { name: 'per-minute' }) },
  { key: 'day', ...rl(100, 'day') },
  { key: 'bucket', ...rl(10, 'hour', { algorithm: 'token-bucket' }) },
  { key: 'zero', ...rl(0, 'second') },
  { key: 'shadow', shadow_mode: true, ...rl(1, 'minute') },
  { key: 'quota1', quota_mode: true, ...rl(1, 'minute') },
  { key: 'quota2', quota_mode: true, ...rl(1, 'minute') },
  { key: 'ldap', rate_limit: { unlimited: true } },
])

/** The slots for one request whose descriptors each have one entry, keyed as named. */
const slots = (...keys: string[]): EnvoySlot[] =>
  planEnvoy(domains, {
    domain: 'd',
    descriptors: keys.map((k) => ({ entries: [e(k, 'v')], hits: 1 })),
  })

const allowed = (remaining: number, resetAtMs = NOW + 60_000): Decision => ({
  allowed: true,
  limit: 5,
  remaining,
  resetAtMs,
  retryAfterMs: 0,
})
const denied: Decision = {
  allowed: false,
  limit: 5,
  remaining: 0,
  resetAtMs: NOW + 9_000,
  retryAfterMs: 9_000,
}

describe('planEnvoy', () => {
  it('names each counter by domain and entries, and carries the hits', () => {
    const [slot] = planEnvoy(domains, {
      domain: 'd',
      descriptors: [{ entries: [e('minute', 'a b|c')], hits: 4 }],
    })
    expect(slot).toMatchObject({
      kind: 'check',
      check: { key: 'envoy|d|minute=a%20b%7Cc', hits: 4 },
    })
  })

  it("builds a configured limit's policy once, when the config loads", () => {
    const [first] = slots('bucket')
    const [again] = slots('bucket')
    const policy = first?.kind === 'check' ? first.check.policy : undefined
    expect(policy).toMatchObject({ algorithm: 'token-bucket', limit: 10 })
    expect(again?.kind === 'check' ? again.check.policy : undefined).toBe(policy)
  })

  it('has nothing to check for unmatched descriptors, and no counter for unlimited ones', () => {
    expect(slots('nothing', 'ldap').map((s) => s.kind)).toEqual(['none', 'unlimited'])
  })

  it('counts in a fixed window per unit, Envoy-style, unless a descriptor picks our algorithm', () => {
    const domains = compile('d', [
      { key: 'a', ...rl(5, 'minute') },
      { key: 'b', ...rl(5, 'month', { algorithm: 'token-bucket' }) },
    ])
    const [a, b] = planEnvoy(domains, {
      domain: 'd',
      descriptors: [
        { entries: [e('a', '1')], hits: 1 },
        { entries: [e('b', '1')], hits: 1 },
      ],
    })
    expect(a?.kind === 'check' && a.check.policy).toEqual({
      algorithm: 'fixed-window',
      limit: 5,
      periodMs: 60_000,
      countDenied: true,
    })
    expect(b?.kind === 'check' && b.check.policy).toEqual({
      algorithm: 'token-bucket',
      limit: 5,
      periodMs: 2_592_000_000,
      burst: 5,
    })
  })
})

describe('envoyResponse', () => {
  it.each<[string, string, Decision | undefined, Record<string, unknown>]>([
    ['nothing matched', 'nothing', undefined, { code: 'OK' }],
    ['unlimited', 'ldap', undefined, { code: 'OK', limitRemaining: MAX_UINT32 }],
    [
      'allowed, fixed window: the rest of the unit in whole seconds',
      'minute',
      allowed(3),
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 5, unit: 'MINUTE', name: 'per-minute' },
        limitRemaining: 3,
        durationUntilReset: '30s',
      },
    ],
    [
      'allowed, a day: counted from midnight UTC',
      'day',
      allowed(99),
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 100, unit: 'DAY' },
        limitRemaining: 99,
        durationUntilReset: `${86_400 - 36_030}s`,
      },
    ],
    [
      'allowed, nothing left: limitRemaining left out',
      'minute',
      allowed(0),
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 5, unit: 'MINUTE', name: 'per-minute' },
        durationUntilReset: '30s',
      },
    ],
    [
      'denied',
      'minute',
      denied,
      {
        code: 'OVER_LIMIT',
        currentLimit: { requestsPerUnit: 5, unit: 'MINUTE', name: 'per-minute' },
        durationUntilReset: '30s',
      },
    ],
    [
      'another algorithm: its own reset, rounded up',
      'bucket',
      allowed(9, NOW + 1_001),
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 10, unit: 'HOUR' },
        limitRemaining: 9,
        durationUntilReset: '2s',
      },
    ],
    [
      'a reset already past: 0s',
      'bucket',
      allowed(9, NOW - 5_000),
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 10, unit: 'HOUR' },
        limitRemaining: 9,
        durationUntilReset: '0s',
      },
    ],
    [
      'a limit of 0: requestsPerUnit left out, as proto3 leaves out defaults',
      'zero',
      denied,
      { code: 'OVER_LIMIT', currentLimit: { unit: 'SECOND' }, durationUntilReset: '1s' },
    ],
    [
      'denied in shadow mode: OK',
      'shadow',
      denied,
      {
        code: 'OK',
        currentLimit: { requestsPerUnit: 1, unit: 'MINUTE' },
        durationUntilReset: '30s',
      },
    ],
  ])('one descriptor, %s', (_label, key, decision, status) => {
    const { body, overLimit } = envoyResponse(slots(key), [decision], NOW, false)
    expect(body).toEqual({ overallCode: status.code, statuses: [status] })
    expect(overLimit).toBe(status.code === 'OVER_LIMIT')
  })

  it.each<[string, string[], Decision[], boolean, string[]]>([
    [
      'one denied rate limit is enough',
      ['minute', 'day'],
      [allowed(1), denied],
      true,
      ['OK', 'OVER_LIMIT'],
    ],
    [
      'one denied quota of two is not',
      ['quota1', 'quota2'],
      [denied, allowed(0)],
      false,
      ['OVER_LIMIT', 'OK'],
    ],
    [
      'every quota denied is',
      ['quota1', 'quota2'],
      [denied, denied],
      true,
      ['OVER_LIMIT', 'OVER_LIMIT'],
    ],
    [
      'a rate limit counts even beside quotas',
      ['quota1', 'minute'],
      [allowed(0), denied],
      true,
      ['OK', 'OVER_LIMIT'],
    ],
  ])('several descriptors: %s', (_label, keys, decisions, over, codes) => {
    const { body, overLimit } = envoyResponse(slots(...keys), decisions, NOW, false)
    expect(overLimit).toBe(over)
    expect(body.overallCode).toBe(over ? 'OVER_LIMIT' : 'OK')
    expect((body.statuses as { code: string }[]).map((s) => s.code)).toEqual(codes)
  })

  it("the document's shadow mode: statuses as decided, never OVER_LIMIT overall", () => {
    const { body, overLimit } = envoyResponse(slots('minute'), [denied], NOW, true)
    expect(overLimit).toBe(false)
    expect(body).toMatchObject({ overallCode: 'OK', statuses: [{ code: 'OVER_LIMIT' }] })
  })
})
