import { describe, expect, it } from 'vitest'
import { ClientStats } from '../../../src/limiter/calls/stats'

describe('ClientStats', () => {
  it('counts calls, in flight until answered, in all and per rule', () => {
    const stats = new ClientStats(1_000)
    const a = stats.call('a', 10)
    const b = stats.call('b', 10)
    expect(stats.snapshot()).toMatchObject({
      sinceMs: 1_000,
      durableObjectCalls: 2,
      inFlight: 2,
      rules: { a: { durableObjectCalls: 1, inFlight: 1 }, b: { durableObjectCalls: 1 } },
    })
    a(15)
    b(30)
    const after = stats.snapshot()
    expect(after.inFlight).toBe(0)
    expect(after.rules.a!.latencyMs).toEqual({ p50: 5, p99: 5 })
    expect(after.latencyMs).toEqual({ p50: 20, p99: 20 })
  })

  it('counts decisions by where they were taken, and fail-opens', () => {
    const stats = new ClientStats(0)
    stats.decided('a', 'local')
    stats.decided('a', 'local')
    stats.decided('a', 'durableObject')
    stats.failedOpen('b')
    expect(stats.snapshot()).toMatchObject({
      decisions: { local: 2, durableObject: 1 },
      failOpen: 1,
      rules: {
        a: { decisions: { local: 2, durableObject: 1 }, failOpen: 0 },
        b: { decisions: { local: 0, durableObject: 0 }, failOpen: 1 },
      },
    })
  })

  it('takes p50 and p99 over the last 512 calls, and none before the first answer', () => {
    const stats = new ClientStats(0)
    expect(stats.snapshot().latencyMs).toEqual({ p50: null, p99: null })
    // 600 calls: the first 88 (latency 1000) fall out of the window of 512.
    for (let i = 0; i < 600; i++) stats.call('a', 0)(i < 88 ? 1_000 : (i % 100) + 1)
    const { p50, p99 } = stats.snapshot().latencyMs
    expect(p50).toBeGreaterThanOrEqual(45)
    expect(p50).toBeLessThanOrEqual(55)
    expect(p99).toBeLessThanOrEqual(100)
  })
})
