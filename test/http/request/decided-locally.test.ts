import { afterEach, describe, expect, it, vi } from 'vitest'
import { clientStats } from '../../../src/limiter/calls/stats'
import { parseRules, type RuleSet } from '../../../src/rules'
import { freezeClock } from '../../support/clock'
import { client, parseRateLimit, rules } from '../../support/http'

const perIp = (id: string, limit: number, extra: Record<string, unknown> = {}) => ({
  id,
  key: ['ip'],
  algorithm: 'fixed-window',
  limit,
  period: '1h',
  ...extra,
})
const global = (id: string) => ({
  id,
  key: [],
  algorithm: 'fixed-window',
  limit: 100,
  period: '1h',
})
const ruleStats = (id: string) =>
  clientStats().snapshot().rules[id] ?? {
    durableObjectCalls: 0,
    decisions: { local: 0, durableObject: 0 },
  }

/** The parts of a response a client sees. */
async function seen(response: Response) {
  const names = [
    'retry-after',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'ratelimit',
    'ratelimit-policy',
  ]
  return {
    status: response.status,
    headers: Object.fromEntries(names.map((name) => [name, response.headers.get(name)])),
    body: await response.json(),
  }
}

describe('blocked keys answered in the isolate, through HTTP', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('answers a blocked key with the same 429 as its object, and no call', async () => {
    freezeClock()
    const send = client({ rules: rules(perIp('local-same', 1)) })
    expect((await send('/a', { ip: '192.0.2.10' })).status).toBe(200)
    const fromObject = await seen(await send('/a', { ip: '192.0.2.10' }))
    const before = ruleStats('local-same')
    const fromIsolate = await seen(await send('/a', { ip: '192.0.2.10' }))
    const after = ruleStats('local-same')
    expect(fromObject.status).toBe(429)
    expect(fromIsolate).toEqual(fromObject)
    expect(after.durableObjectCalls - before.durableObjectCalls).toBe(0)
    expect(after.decisions.local - before.decisions.local).toBe(1)
    // Another client of the same rule is still decided by its own object.
    expect((await send('/a', { ip: '192.0.2.11' })).status).toBe(200)
  })

  it('charges no other rule for a request blocked locally', async () => {
    const send = client({ rules: rules(perIp('local-a', 1), global('local-b')) })
    const remainingOfB = async (ip: string) =>
      parseRateLimit((await send('/b', { ip })).headers.get('ratelimit'))['local-b']?.r
    expect(await remainingOfB('192.0.2.20')).toBe(99)
    // Denied by its object: charged to local-b in the same moment.
    expect((await send('/b', { ip: '192.0.2.20' })).status).toBe(429)
    const blocked = await send('/b', { ip: '192.0.2.20' })
    expect(blocked.status).toBe(429)
    expect(Object.keys(parseRateLimit(blocked.headers.get('ratelimit')))).toEqual(['local-a'])
    expect(await remainingOfB('192.0.2.21')).toBe(97)
  })

  it('repeats a shadow denial as "would deny" and still charges the other rules', async () => {
    const send = client({
      rules: rules(perIp('local-shadow', 1, { shadow: true }), global('local-counted')),
    })
    const remaining = async () =>
      parseRateLimit((await send('/c', { ip: '192.0.2.30' })).headers.get('ratelimit'))[
        'local-counted'
      ]?.r
    expect(await remaining()).toBe(99)
    expect(await remaining()).toBe(98)
    const before = ruleStats('local-shadow')
    expect(await remaining()).toBe(97)
    expect(ruleStats('local-shadow').decisions.local - before.decisions.local).toBe(1)
  })

  it('keeps entries across a reload of unchanged rules, and asks again when a rule changes', async () => {
    const doc = (limit: number) => ({ version: 1, rules: [perIp('local-reload', limit)] })
    let ruleSet: RuleSet = parseRules(doc(1), 'test')
    const send = client({ rules: { get: () => Promise.resolve(ruleSet) } })
    await send('/d', { ip: '192.0.2.40' })
    expect((await send('/d', { ip: '192.0.2.40' })).status).toBe(429)
    const calls = () => ruleStats('local-reload').durableObjectCalls
    const start = calls()
    ruleSet = parseRules(doc(1), 'test')
    expect((await send('/d', { ip: '192.0.2.40' })).status).toBe(429)
    expect(calls()).toBe(start)
    // The rule edited (a limit of 2): its object is asked again. The version before, in use
    // until a moment ago, still binds (the stricter of two versions in use).
    ruleSet = parseRules(doc(2), 'test')
    expect((await send('/d', { ip: '192.0.2.40' })).status).toBe(429)
    expect(calls()).toBe(start + 1)
  })

  it('admits exactly 100 of 500 concurrent requests for one key, in far fewer calls', async () => {
    const send = client({ rules: rules({ ...global('local-500'), limit: 100 }) })
    const before = ruleStats('local-500')
    const statuses = await Promise.all(
      Array.from({ length: 500 }, (_, i) => send('/e', { ip: `198.51.100.${i % 250}` }))
    ).then((responses) => responses.map((r) => r.status))
    expect(statuses.filter((s) => s === 200)).toHaveLength(100)
    expect(statuses.filter((s) => s === 429)).toHaveLength(400)
    const after = ruleStats('local-500')
    expect(after.durableObjectCalls - before.durableObjectCalls).toBeLessThan(50)
    const decided = (s: typeof after) => s.decisions.local + s.decisions.durableObject
    expect(decided(after) - decided(before)).toBe(500)
  })
})
