import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Policy } from '../../../src/algorithms'
import { BlockCache, policyFingerprint } from '../../../src/limiter/exact/block-cache'
import { charge, resetKey } from '../../../src/limiter/client'
import { LimiterIsolate } from '../../../src/limiter/isolate'
import type { Decision } from '../../../src/types'
import { freezeClock } from '../../support/clock'
import { CALL_MS, chargeCalls } from '../../support/charge-calls'

const bucket: Policy = { algorithm: 'token-bucket', limit: 10, periodMs: 60_000, burst: 10 }
const denial = (retryAfterMs: number): Decision => ({
  allowed: false,
  limit: 10,
  remaining: 0,
  resetAtMs: 1_000_000 + retryAfterMs,
  retryAfterMs,
})

describe('BlockCache', () => {
  it('repeats a denial for the same or a larger cost under the same policy, until the retry time', () => {
    const cache = new BlockCache()
    cache.note('k', bucket, 5, denial(3_000), 1_000)
    expect(cache.answer('k', bucket, 5, 2_000)).toMatchObject({
      allowed: false,
      retryAfterMs: 2_000,
    })
    expect(cache.answer('k', bucket, 9, 3_999)).toMatchObject({ retryAfterMs: 1 })
    // A smaller request may fit: the object decides it.
    expect(cache.answer('k', bucket, 4, 2_000)).toBeUndefined()
    expect(cache.answer('k', bucket, 5, 4_000)).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('drops an entry when the policy changes, keeps it across an unchanged reload', () => {
    const cache = new BlockCache()
    cache.note('k', bucket, 1, denial(5_000), 0)
    expect(cache.answer('k', { ...bucket }, 1, 10)).toBeDefined()
    expect(policyFingerprint({ ...bucket })).toBe(policyFingerprint(bucket))
    expect(cache.answer('k', { ...bucket, limit: 20 }, 1, 10)).toBeUndefined()
    expect(cache.answer('k', bucket, 1, 10)).toBeUndefined()
  })

  it('caps an entry at maxAgeMs, so a reset elsewhere is honoured within it', () => {
    const cache = new BlockCache(10, 10_000)
    cache.note('k', bucket, 1, denial(3_600_000), 0)
    expect(cache.answer('k', bucket, 1, 9_999)).toMatchObject({ retryAfterMs: 3_590_001 })
    expect(cache.answer('k', bucket, 1, 10_000)).toBeUndefined()
  })

  it('holds at most maxEntries keys, dropping the least recently used', () => {
    const cache = new BlockCache(3)
    for (const key of ['a', 'b', 'c']) cache.note(key, bucket, 1, denial(5_000), 0)
    expect(cache.answer('a', bucket, 1, 1)).toBeDefined()
    cache.note('d', bucket, 1, denial(5_000), 0)
    expect(cache.size).toBe(3)
    expect(cache.answer('b', bucket, 1, 1)).toBeUndefined()
    expect(['a', 'c', 'd'].map((key) => cache.answer(key, bucket, 1, 1) !== undefined)).toEqual([
      true,
      true,
      true,
    ])
  })

  it('ignores allowed decisions and concurrency limits', () => {
    const cache = new BlockCache()
    cache.note('k', bucket, 1, { ...denial(0), allowed: true }, 0)
    const slots: Policy = {
      algorithm: 'concurrency',
      limit: 1,
      periodMs: 1,
      queue: 0,
      maxWaitMs: 0,
    }
    cache.note('s', slots, 1, denial(5_000), 0)
    expect(cache.size).toBe(0)
  })
})

describe('the client answers blocked keys itself', () => {
  afterEach(() => {
    vi.useRealTimers()
  })
  const call = chargeCalls('bc', bucket)
  const calls = (isolate: LimiterIsolate) => isolate.stats.snapshot().durableObjectCalls

  it('never denies what the object would allow: a smaller cost that fits goes to the object', async () => {
    freezeClock()
    const isolate = new LimiterIsolate()
    const at = (cost: number) => charge(env.LIMITER, call('costs', { cost }), CALL_MS, isolate)
    expect(await at(8)).toMatchObject({ decision: { allowed: true, remaining: 2 } })
    expect(await at(5)).toMatchObject({ decision: { allowed: false } })
    expect(calls(isolate)).toBe(2)
    const repeated = await at(5)
    expect(repeated).toMatchObject({ local: true, decision: { allowed: false, remaining: 2 } })
    expect(calls(isolate)).toBe(2)
    expect(await at(1)).toMatchObject({ decision: { allowed: true } })
    expect(calls(isolate)).toBe(3)
    expect(isolate.stats.snapshot().decisions).toEqual({ local: 1, durableObject: 3 })
  })

  it('asks the object again after the retry time, under a changed policy, and after a reset', async () => {
    const nowMs = freezeClock()
    const isolate = new LimiterIsolate()
    const one = call('again', { policy: { ...bucket, limit: 1, burst: 1 } })
    await charge(env.LIMITER, one, CALL_MS, isolate)
    const denied = await charge(env.LIMITER, one, CALL_MS, isolate)
    const retryAfterMs = denied.enforced ? denied.decision.retryAfterMs : 0
    expect(retryAfterMs).toBe(60_000)
    expect(await charge(env.LIMITER, one, CALL_MS, isolate)).toMatchObject({ local: true })
    expect(calls(isolate)).toBe(2)
    // A rule edit (limit 2): the object decides again. The version before the edit is still in
    // use (lately called), and the stricter binds: its bucket, empty, has a token in 60 s.
    const edited = { ...one, policy: { ...bucket, limit: 2, burst: 2 } }
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({
      decision: { allowed: false, retryAfterMs: 60_000 },
    })
    expect(calls(isolate)).toBe(3)
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({ local: true })
    // The retry time passes: the object is asked, and admits.
    vi.setSystemTime(nowMs + 60_000)
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({
      decision: { allowed: true },
    })
    expect(calls(isolate)).toBe(4)
    // Blocked again; an admin reset here is honoured at once.
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({
      decision: { allowed: false },
    })
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({ local: true })
    await resetKey(env.LIMITER, edited, CALL_MS, isolate)
    expect(await charge(env.LIMITER, edited, CALL_MS, isolate)).toMatchObject({
      decision: { allowed: true },
    })
    expect(calls(isolate)).toBe(7)
  })

  it('repeats penalty locks, whatever the algorithm behind them', async () => {
    freezeClock()
    const isolate = new LimiterIsolate()
    const locked = call('penalty', {
      policy: { algorithm: 'gcra', limit: 1, periodMs: 1_000, burst: 1, penaltyMs: 600_000 },
    })
    await charge(env.LIMITER, locked, CALL_MS, isolate)
    const denied = await charge(env.LIMITER, locked, CALL_MS, isolate)
    expect(denied).toMatchObject({ decision: { allowed: false, retryAfterMs: 600_000 } })
    expect(await charge(env.LIMITER, locked, CALL_MS, isolate)).toMatchObject({
      local: true,
      decision: { retryAfterMs: 600_000 },
    })
  })
})
