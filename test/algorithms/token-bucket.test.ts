import { describe, expect, it } from 'vitest'
import { drive } from '../support/drive'
import { tokenBucket, type TokenBucketPolicy, type TokenBucketState } from '../../src/algorithms'

const policy: TokenBucketPolicy = {
  algorithm: 'token-bucket',
  limit: 10,
  periodMs: 1_000,
  burst: 20,
}
const T0 = 1_700_000_000_000

const burst = (state: TokenBucketState | undefined, count: number, nowMs: number) =>
  drive(tokenBucket, policy, state, count, nowMs)

describe('token bucket', () => {
  it('starts full: a burst of `burst` passes, then it denies', () => {
    const { state, allowed } = burst(undefined, 25, T0)
    expect(allowed).toBe(20)
    expect(state).toEqual({ tokens: 0, updatedAtMs: T0 })
  })

  it('reports the capacity as limit and when the bucket is full again', () => {
    const { decision } = tokenBucket.charge(undefined, policy, T0, 1)
    expect(decision).toEqual({
      allowed: true,
      limit: 20,
      remaining: 19,
      resetAtMs: T0 + 100,
      retryAfterMs: 0,
    })
  })

  it.each([
    [99, 0],
    [100, 1],
    [550, 5],
    [2_000, 20],
    [86_400_000, 20],
  ])('after %i ms of an empty bucket, %i pass', (elapsed, expected) => {
    const empty = { tokens: 0, updatedAtMs: T0 }
    expect(burst(empty, 30, T0 + elapsed).allowed).toBe(expected)
  })

  it('retryAfterMs is exact for the cost asked', () => {
    const empty = { tokens: 0.5, updatedAtMs: T0 }
    const denied = tokenBucket.charge(empty, policy, T0, 3)
    expect(denied.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 250 })
    expect(denied.state).toBe(empty)
    expect(tokenBucket.charge(empty, policy, T0 + 249, 3).decision.allowed).toBe(false)
    expect(tokenBucket.charge(empty, policy, T0 + 250, 3).decision.allowed).toBe(true)
  })

  it('denies a cost above the tokens without storing a deficit (upstash#156)', () => {
    const state = { tokens: 2, updatedAtMs: T0 }
    const outcome = tokenBucket.charge(state, policy, T0, 5)
    expect(outcome.decision.allowed).toBe(false)
    expect(outcome.state).toBe(state)
    expect(tokenBucket.charge(state, policy, T0, 2).decision).toMatchObject({
      allowed: true,
      remaining: 0,
    })
  })

  it('a cost above the capacity never passes and points at a full bucket', () => {
    const outcome = tokenBucket.charge({ tokens: 5, updatedAtMs: T0 }, policy, T0, 21)
    expect(outcome.decision.allowed).toBe(false)
    expect(outcome.decision.retryAfterMs).toBe(1_500)
  })

  it('cost 0 looks without charging', () => {
    const state = { tokens: 0, updatedAtMs: T0 }
    const outcome = tokenBucket.charge(state, policy, T0 + 50, 0)
    expect(outcome.decision).toMatchObject({ allowed: true, remaining: 0 })
    expect(outcome.state).toBe(state)
  })

  it('remaining 0 after the last token is still an allowed request (upstash#74)', () => {
    const outcome = tokenBucket.charge({ tokens: 1, updatedAtMs: T0 }, policy, T0, 1)
    expect(outcome.decision).toMatchObject({ allowed: true, remaining: 0 })
  })

  it('a clock that went backwards refills nothing and does not move time back', () => {
    const state = { tokens: 0, updatedAtMs: T0 }
    const outcome = tokenBucket.charge(state, policy, T0 - 10_000, 1)
    expect(outcome.decision.allowed).toBe(false)
    const later = tokenBucket.charge({ tokens: 1, updatedAtMs: T0 }, policy, T0 - 10_000, 1)
    expect(later.state).toEqual({ tokens: 0, updatedAtMs: T0 })
  })

  it('accumulates fractional refills without drift', () => {
    const slow: TokenBucketPolicy = {
      algorithm: 'token-bucket',
      limit: 3,
      periodMs: 10_000,
      burst: 3,
    }
    let state: TokenBucketState | undefined = { tokens: 0, updatedAtMs: T0 }
    let allowed = 0
    // One request every ms for 100 s: exactly 3 tokens per 10 s arrive, so 30 pass.
    for (let t = 1; t <= 100_000; t++) {
      const outcome = tokenBucket.charge(state, slow, T0 + t, 1)
      state = outcome.state
      if (outcome.decision.allowed) allowed++
    }
    expect(allowed).toBe(30)
  })

  it('handles a 365-day period', () => {
    const year: TokenBucketPolicy = {
      algorithm: 'token-bucket',
      limit: 1,
      periodMs: 365 * 86_400_000,
      burst: 1,
    }
    const first = tokenBucket.charge(undefined, year, T0, 1)
    const second = tokenBucket.charge(first.state, year, T0 + 1, 1)
    expect(second.decision.allowed).toBe(false)
    expect(second.decision.retryAfterMs).toBe(365 * 86_400_000 - 1)
  })

  it('expires when the bucket is full again', () => {
    expect(tokenBucket.expiresAtMs({ tokens: 15, updatedAtMs: T0 }, policy)).toBe(T0 + 500)
    expect(tokenBucket.expiresAtMs({ tokens: 20, updatedAtMs: T0 }, policy)).toBe(T0)
  })
})
