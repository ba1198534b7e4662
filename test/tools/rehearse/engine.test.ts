import { describe, expect, it } from 'vitest'
import { parseRules } from '../../../src/rules'
import { ReplayLimiter, type RequestDecision } from '../../../tools/rehearse/engine'
import { facts, withHeaders } from '../../support/facts'

const rules = (list: Record<string, unknown>[], extra: Record<string, unknown> = {}) =>
  parseRules({ version: 1, rules: list, ...extra }, 'test')

const T0 = Date.UTC(2026, 10, 2, 9, 0, 0)

/** Each rule's verdict as `id:allowed|denied|-` (`-`: not charged). */
function verdicts(decision: RequestDecision): string[] {
  return decision.rules.map(({ check, decision }) => {
    const said = decision === undefined ? '-' : decision.allowed ? 'allowed' : 'denied'
    return `${check.rule.id}:${said}`
  })
}

const perIp = { id: 'per-ip', key: ['ip'], algorithm: 'sliding-window', limit: 2, period: '1s' }

describe('a rules document deciding recorded requests', () => {
  it('decides as the keys’ objects do, in the requests’ time', () => {
    const limiter = new ReplayLimiter(rules([perIp]))
    const outcomes = [0, 10, 20, 1_500, 2_100].map(
      (t) => limiter.decide(facts(), 200, T0 + t).outcome
    )
    expect(outcomes).toEqual(['allowed', 'allowed', 'denied', 'allowed', 'allowed'])
  })

  it('refuses before charging other rules once the isolate knows a key is denied', () => {
    const limiter = new ReplayLimiter(
      rules([
        { ...perIp, limit: 1, period: '1m' },
        { id: 'global', key: [], algorithm: 'fixed-window', limit: 100, period: '1m' },
      ])
    )
    const seen = [0, 1, 2].map((t) => verdicts(limiter.decide(facts(), 200, T0 + t)))
    expect(seen).toEqual([
      ['per-ip:allowed', 'global:allowed'],
      // The object denies: the other rule was charged at the same moment.
      ['per-ip:denied', 'global:allowed'],
      // Known here: refused without a call, the other rule not charged.
      ['per-ip:denied', 'global:-'],
    ])
  })

  it('counts responses where countOn says, and never those of a refused request', () => {
    const login = {
      id: 'login',
      match: { path: '/login' },
      key: ['header:x-account'],
      algorithm: 'sliding-window',
      limit: 2,
      period: '1m',
      countOn: { status: [401] },
    }
    const limiter = new ReplayLimiter(rules([login]))
    const ann = withHeaders({ 'x-account': 'ann' }, { path: '/login' })
    const outcomes = [200, 200, 401, 200, 401, 401, 200].map(
      (status, i) => limiter.decide(ann, status, T0 + i).outcome
    )
    expect(outcomes).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'allowed',
      'allowed',
      'denied',
      'denied',
    ])
  })

  it('lets shadow rules only would-deny, degrades, and answers lists and unreadable requests', () => {
    const limiter = new ReplayLimiter(
      rules(
        [
          { ...perIp, id: 'watch', limit: 1, shadow: true },
          {
            ...perIp,
            id: 'soft',
            match: { path: '/soft' },
            limit: 1,
            action: 'degrade',
            degradeHeader: true,
          },
          {
            id: 'by-key',
            key: ['header:x-api-key'],
            algorithm: 'fixed-window',
            limit: 5,
            period: '1m',
          },
        ],
        { lists: { deny: { countries: ['KP'] }, allow: { ips: ['198.51.100.0/24'] } } }
      )
    )
    expect(limiter.decide(facts(), 200, T0).outcome).toBe('allowed')
    const second = limiter.decide(facts(), 200, T0 + 1)
    expect(second.outcome).toBe('allowed')
    expect(verdicts(second)).toEqual(['watch:denied'])
    expect(limiter.decide(facts({ path: '/soft' }), 200, T0 + 2).outcome).toBe('allowed')
    expect(limiter.decide(facts({ path: '/soft' }), 200, T0 + 3).outcome).toBe('degraded')
    expect(limiter.decide(facts({ country: 'KP' }), 200, T0).outcome).toBe('forbidden')
    expect(
      limiter.decide(facts({ ip: '198.51.100.9', address: '198.51.100.9' }), 200, T0).rules
    ).toEqual([])
    const twoSpellings = withHeaders({ 'x-api-key': 'a', x_api_key: 'b' })
    expect(limiter.decide(twoSpellings, 200, T0).outcome).toBe('bad-request')
  })

  it('takes tiers and costs from the request, and leaves out the rules it is told to', () => {
    const tiered = {
      id: 'tiered',
      key: ['ip'],
      algorithm: 'fixed-window',
      limit: 1,
      period: '1m',
      tiers: { from: 'header:x-plan', limits: { paid: 3 } },
      cost: { header: 'x-cost', max: 10 },
    }
    const limiter = new ReplayLimiter(
      rules([tiered, { ...perIp, id: 'left-out', limit: 1 }]),
      new Set(['left-out'])
    )
    const paid = (cost: string) => withHeaders({ 'x-plan': 'paid', 'x-cost': cost })
    expect(limiter.decide(paid('2'), 200, T0).outcome).toBe('allowed')
    expect(limiter.decide(paid('2'), 200, T0 + 1).outcome).toBe('denied')
    expect(limiter.decide(paid('1'), 200, T0 + 2).outcome).toBe('allowed')
    expect(
      limiter.decide(facts({ ip: '192.0.2.1' }), 200, T0).rules.map(({ check }) => check.rule.id)
    ).toEqual(['tiered'])
  })

  it('forgets keys once their state has expired, so memory follows the keys alive', () => {
    const limiter = new ReplayLimiter(rules([perIp]))
    let most = 0
    for (let i = 0; i < 50_000; i++) {
      // 100 new addresses every 100 ms: about 1,000 keys alive in any second.
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      limiter.decide(facts({ ip }), 200, T0 + Math.floor(i / 100) * 100)
      most = Math.max(most, limiter.keys)
    }
    expect(most).toBeLessThan(10_000)
  })
})
