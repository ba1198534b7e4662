import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Policy } from '../../src/algorithms'
import { VERSION_OVERLAP_MS } from '../../src/algorithms/key-record'
import type { LeasablePolicy } from '../../src/algorithms/reserve'
import { freezeClock } from '../support/clock'

const MINUTE = 60_000
const perMinute: Policy = { algorithm: 'sliding-window', limit: 100, periodMs: MINUTE }

afterEach(() => {
  vi.useRealTimers()
})

/** The key's object for one test. */
const objectFor = (name: string) => env.LIMITER.getByName(`edits-${name}`)

/**
 * Charges `count` requests of one unit, the policies taking turns, `stepMs` apart, inside the
 * object (one call into it, not one per request); the admitted count.
 */
function alternate(name: string, policies: Policy[], count: number, stepMs = 0) {
  return runInDurableObject(objectFor(name), (instance) => {
    let admitted = 0
    for (let i = 0; i < count; i++) {
      if (stepMs > 0) vi.setSystemTime(Date.now() + stepMs)
      if (instance.charge(policies[i % policies.length]!, 1).allowed) admitted++
    }
    return admitted
  })
}

describe('a rule edit while both versions are in use', () => {
  it('admits no more than the stricter version: 100/min edited to 100 per 2 min, calls alternating', async () => {
    // A second into a minute: the 10 s of calls stay inside it (a sliding window crossing into
    // the next minute rightly admits what the last one's weight gives back).
    vi.setSystemTime(Math.ceil(freezeClock() / MINUTE) * MINUTE + 1_000)
    const twoMinutes: Policy = { ...perMinute, periodMs: 2 * MINUTE }
    // 1,000 requests in 10 s, the versions taking turns: before, each started the key afresh.
    expect(await alternate('period', [perMinute, twoMinutes], 1_000, 10)).toBe(100)
  })

  it.each<[string, Policy]>([
    ['its period', { ...perMinute, periodMs: 2 * MINUTE }],
    ['its algorithm', { algorithm: 'token-bucket', limit: 100, periodMs: MINUTE, burst: 100 }],
    ['its algorithm to a log', { algorithm: 'sliding-log', limit: 100, periodMs: MINUTE }],
    [
      'its algorithm to a fixed window',
      { algorithm: 'fixed-window', limit: 100, periodMs: MINUTE },
    ],
    ['its algorithm to GCRA', { algorithm: 'gcra', limit: 100, periodMs: MINUTE, burst: 100 }],
  ])('keeps what was counted when it changes %s: 60 used of 100 leave 40', async (name, edited) => {
    freezeClock()
    await alternate(`keeps-${name}`, [perMinute], 60)
    // The new version alone from now on: it starts from the 60 the old one counted.
    expect(await alternate(`keeps-${name}`, [edited], 100)).toBe(40)
  })

  it.each<[string, Policy, number]>([
    // Tightened: the new limit binds at once (60 used of 50).
    ['tightened', { ...perMinute, limit: 50 }, 0],
    // Loosened: the version before binds while it is in use.
    ['loosened', { ...perMinute, limit: 150 }, 40],
  ])('holds a limit %s to both versions while both are in use', async (name, edited, more) => {
    freezeClock()
    await alternate(`limit-${name}`, [perMinute], 60)
    expect(await alternate(`limit-${name}`, [edited, perMinute], 200)).toBe(more)
  })

  it('lets a loosened limit take effect once the version before is out of use', async () => {
    const startMs = freezeClock()
    const stub = objectFor('loosened-later')
    const hourly: Policy = { ...perMinute, periodMs: 60 * MINUTE }
    const edited: Policy = { ...hourly, limit: 150 }
    await alternate('loosened-later', [hourly], 100)
    expect((await stub.charge(edited, 1)).allowed).toBe(false)
    // The last call under the version before was just now: it still binds a while.
    vi.setSystemTime(startMs + VERSION_OVERLAP_MS / 2)
    expect((await stub.charge(edited, 1)).allowed).toBe(false)
    vi.setSystemTime(startMs + VERSION_OVERLAP_MS + 1)
    expect(await alternate('loosened-later', [edited], 60)).toBe(50)
  })

  it('holds a burst edit to both versions, and a cost edit to the units each version charges', async () => {
    freezeClock()
    const bucket: Policy = { algorithm: 'token-bucket', limit: 1, periodMs: MINUTE, burst: 10 }
    const stub = objectFor('burst')
    // The first under the burst of 20 alone; then, both in use, the burst of 10 binds.
    expect(await alternate('burst', [{ ...bucket, burst: 20 }, bucket], 40)).toBe(1 + 10)
    // A cost of 3 under the new version, 1 under the old: the units add up to the limit.
    const units = await runInDurableObject(objectFor('cost'), (instance) => {
      let total = 0
      for (let i = 0; i < 60; i++) {
        const cost = i % 2 ? 3 : 1
        if (instance.charge(perMinute, cost).allowed) total += cost
      }
      return total
    })
    expect(units).toBeLessThanOrEqual(100)
    expect(units).toBeGreaterThanOrEqual(97)
    expect((await stub.charge(bucket, 1)).allowed).toBe(false)
  })

  it('keeps a penalty lock across an algorithm edit', async () => {
    freezeClock()
    const locking: Policy = { ...perMinute, limit: 2, penaltyMs: 10 * MINUTE }
    const stub = objectFor('penalty')
    expect(await alternate('penalty', [locking], 3)).toBe(2)
    const edited: Policy = { algorithm: 'fixed-window', limit: 50, periodMs: MINUTE }
    const denied = await stub.charge(edited, 1)
    expect(denied.allowed).toBe(false)
    expect(denied.retryAfterMs).toBeGreaterThan(9 * MINUTE)
  })

  it('tells tiers apart from versions: a tier of its own limit is not held to another', async () => {
    freezeClock()
    const free: Policy = { ...perMinute, limit: 10, tier: 'free' }
    const paid: Policy = { ...perMinute, limit: 100, tier: 'paid' }
    const admitted = { free: 0, paid: 0 }
    await runInDurableObject(objectFor('tiers'), (instance) => {
      for (let i = 0; i < 200; i++) {
        const policy = i % 2 ? paid : free
        if (instance.charge(policy, 1).allowed) admitted[policy.tier as 'free' | 'paid']++
      }
    })
    // They share the key's count: free requests stop once it reaches 10, paid ones at 100.
    expect(admitted).toEqual({ free: 5, paid: 95 })
  })

  it('continues a record stored before versions were kept', async () => {
    const nowMs = freezeClock()
    const stub = objectFor('old-record')
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.kv.put('state', {
        algorithm: 'sliding-window',
        periodMs: MINUTE,
        state: {
          state: { windowStartMs: Math.floor(nowMs / MINUTE) * MINUTE, current: 95, previous: 0 },
        },
        expiresAtMs: nowMs + 2 * MINUTE,
      })
    })
    expect(await alternate('old-record', [perMinute], 10)).toBe(5)
  })

  it('grants a leased key no more than the stricter version, calls alternating', async () => {
    freezeClock()
    const stub = objectFor('leased')
    const a: LeasablePolicy = { algorithm: 'sliding-window', limit: 100, periodMs: MINUTE }
    const b: LeasablePolicy = { ...a, periodMs: 2 * MINUTE }
    let granted = 0
    for (let i = 0; i < 40; i++) {
      vi.setSystemTime(Date.now() + 100)
      const reservation = await stub.reserve(i % 2 ? b : a, {
        units: 50,
        minUnits: 1,
        nextUnits: 50,
        lessee: `lessee-${i % 4}`,
      })
      granted += reservation.granted
      granted += reservation.next?.granted ?? 0
      for (const each of reservation.ramp ?? []) granted += each.granted
    }
    // Before: each version started the key afresh, and the root granted 2,000 units.
    expect(granted).toBeLessThanOrEqual(100)
    expect(granted).toBeGreaterThan(50)
  })
})
