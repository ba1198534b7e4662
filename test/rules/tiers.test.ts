import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import type { Policy } from '../../src/algorithms'
import { compileTiers, tierPolicy, TiersSchema } from '../../src/rules/tiers'
import type { RequestFacts } from '../../src/types'
import { facts } from '../support/facts'

const window: Policy = { algorithm: 'sliding-window', limit: 100, periodMs: 3_600_000 }
const bucket: Policy = { algorithm: 'token-bucket', limit: 100, periodMs: 3_600_000, burst: 100 }
const headerTiers = { from: 'header:X-Plan', limits: { paid: 1000, enterprise: 10_000 } }
const fromHeader = compileTiers(headerTiers, window, false)
const fromClaim = compileTiers(
  { from: 'claim:https://example.com/plan', limits: { paid: 1000 } },
  window,
  false
)

describe('compileTiers', () => {
  it('lower-cases a header name and keeps a claim name (colons included) as written', () => {
    expect(fromHeader.from).toEqual({ kind: 'header', name: 'x-plan' })
    expect(fromClaim.from).toEqual({ kind: 'claim', name: 'https://example.com/plan' })
    expect([...fromHeader.limits]).toEqual([
      ['paid', 1000],
      ['enterprise', 10_000],
    ])
  })
})

describe('tierPolicy', () => {
  it.each<[string, Partial<RequestFacts>, number]>([
    ['a known tier', { headers: new Headers({ 'x-plan': 'paid' }) }, 1000],
    ['another known tier', { headers: new Headers({ 'X-Plan': 'enterprise' }) }, 10_000],
    ['an unknown tier', { headers: new Headers({ 'x-plan': 'platinum' }) }, 100],
    ['a tier in the wrong case', { headers: new Headers({ 'x-plan': 'Paid' }) }, 100],
    ['no header', {}, 100],
    // A header tier ignores claims, even verified ones.
    ['only a claim', { claims: { 'x-plan': 'paid' } }, 100],
  ])('header tiers, %s: limit %i', (_, overrides, limit) => {
    const tier = limit === window.limit ? {} : { tier: limit === 1000 ? 'paid' : 'enterprise' }
    expect(tierPolicy(window, fromHeader, facts(overrides))).toEqual({ ...window, limit, ...tier })
  })

  it.each<[string, Record<string, unknown> | undefined, number]>([
    ['a known tier', { 'https://example.com/plan': 'paid' }, 1000],
    ['an unknown tier', { 'https://example.com/plan': 'gold' }, 100],
    ['a tier that is not a string', { 'https://example.com/plan': ['paid'] }, 100],
    ['no claim', {}, 100],
    ['no verified token', undefined, 100],
  ])('claim tiers, %s: limit %i', (_, claims, limit) => {
    const f = facts({ headers: new Headers({ 'https-plan': 'paid' }), claims })
    expect(tierPolicy(window, fromClaim, f).limit).toBe(limit)
  })

  it("fills a bucket's burst with the tier's limit unless the rule set burst itself", () => {
    const paid = facts({ headers: new Headers({ 'x-plan': 'paid' }) })
    const tiers = (explicit: boolean) => compileTiers(headerTiers, bucket, explicit)
    expect(tierPolicy(bucket, tiers(false), paid)).toEqual({
      ...bucket,
      limit: 1000,
      burst: 1000,
      tier: 'paid',
    })
    expect(tierPolicy(bucket, tiers(true), paid)).toEqual({
      ...bucket,
      limit: 1000,
      burst: 100,
      tier: 'paid',
    })
  })

  it('returns the rule policy itself when no tier applies, and one policy per tier', () => {
    expect(tierPolicy(window, fromHeader, facts())).toBe(window)
    const paid = () => facts({ headers: new Headers({ 'x-plan': 'paid' }) })
    // Made once when the rules are compiled: a key's lease and its object tell tiers by it.
    expect(tierPolicy(window, fromHeader, paid())).toBe(tierPolicy(window, fromHeader, paid()))
  })
})

describe('TiersSchema', () => {
  it.each([
    { from: 'header:x-plan', limits: {} },
    { from: 'header:', limits: { paid: 1 } },
    { from: 'header:bad name', limits: { paid: 1 } },
    { from: 'claim:', limits: { paid: 1 } },
    { from: 'query:plan', limits: { paid: 1 } },
    { from: 'header:x-plan', limits: { paid: 0 } },
    { from: 'header:x-plan', limits: { paid: 1.5 } },
    { from: 'header:x-plan', limits: { paid: 1_000_000_001 } },
    { from: 'header:x-plan', limits: { paid: 1 }, default: 5 },
  ])('refuses %j', (input) => {
    expect(v.safeParse(TiersSchema, input).success).toBe(false)
  })
})
