import { describe, expect, it } from 'vitest'
import { leakyBucket, type LeakyBucketPolicy } from '../../src/algorithms'
import { drive } from '../support/drive'

const meter: LeakyBucketPolicy = { algorithm: 'leaky-bucket', limit: 10, periodMs: 1_000, burst: 4 }
const shaper: LeakyBucketPolicy = { ...meter, shape: true, maxWaitMs: 300 }
const T0 = 1_700_000_000_000

describe('leaky bucket', () => {
  it('as a meter, passes at once until the bucket is full, then denies', () => {
    const { state, allowed } = drive(leakyBucket, meter, undefined, 6, T0)
    expect(allowed).toBe(4)
    const denied = leakyBucket.charge(state, meter, T0, 1)
    expect(denied.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 })
    expect(denied.decision.delayMs).toBeUndefined()
    expect(leakyBucket.charge(state, meter, T0 + 100, 1).decision.allowed).toBe(true)
  })

  it('as a shaper, spaces admitted requests at the leak rate', () => {
    let state
    const delays: number[] = []
    for (let i = 0; i < 4; i++) {
      const outcome = leakyBucket.charge(state, shaper, T0, 1)
      state = outcome.state
      delays.push(outcome.decision.delayMs!)
    }
    expect(delays).toEqual([0, 100, 200, 300])
  })

  it('as a shaper, denies what would wait past maxWait or overflow the bucket', () => {
    let state
    const allowed: boolean[] = []
    for (let i = 0; i < 5; i++) {
      const outcome = leakyBucket.charge(state, { ...shaper, maxWaitMs: 200 }, T0, 1)
      state = outcome.state
      allowed.push(outcome.decision.allowed)
    }
    expect(allowed).toEqual([true, true, true, false, false])
    const waited = leakyBucket.charge(state, { ...shaper, maxWaitMs: 200 }, T0, 1)
    expect(waited.decision.retryAfterMs).toBe(100)
  })

  it('expires when drained', () => {
    const { state } = drive(leakyBucket, meter, undefined, 3, T0)
    expect(leakyBucket.expiresAtMs(state!, meter)).toBe(T0 + 300)
  })
})

describe('leaky bucket shaper: remaining', () => {
  it('counts only what can still be admitted within maxWait', () => {
    const tight: LeakyBucketPolicy = {
      algorithm: 'leaky-bucket',
      limit: 10,
      periodMs: 1_000,
      burst: 10,
      shape: true,
      maxWaitMs: 100,
    }
    let state
    const seen: [boolean, number][] = []
    for (let i = 0; i < 3; i++) {
      const outcome = leakyBucket.charge(state, tight, T0, 1)
      state = outcome.state
      seen.push([outcome.decision.allowed, outcome.decision.remaining])
    }
    expect(seen).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ])
  })
})
