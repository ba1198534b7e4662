import { describe, expect, it } from 'vitest'
import {
  gcra,
  tokenBucket,
  type GcraPolicy,
  type GcraState,
  type TokenBucketState,
} from '../../src/algorithms'
import { drive } from '../support/drive'

const policy: GcraPolicy = { algorithm: 'gcra', limit: 10, periodMs: 1_000, burst: 5 }
const T0 = 1_700_000_000_000

describe('GCRA', () => {
  it('admits a burst of `burst`, then one per emission interval', () => {
    const { state, allowed } = drive(gcra, policy, undefined, 8, T0)
    expect(allowed).toBe(5)
    expect(state).toEqual({ tatMs: T0 + 500 })
    expect(gcra.charge(state, policy, T0 + 99, 1).decision.allowed).toBe(false)
    expect(gcra.charge(state, policy, T0 + 100, 1).decision.allowed).toBe(true)
  })

  it('keeps one timestamp and reports retry, remaining and reset', () => {
    const { state } = drive(gcra, policy, undefined, 5, T0)
    const denied = gcra.charge(state, policy, T0 + 30, 2)
    expect(denied.decision).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      resetAtMs: T0 + 500,
      retryAfterMs: 170,
    })
    expect(denied.state).toBe(state)
  })

  it('decides exactly as a token bucket of the same shape', () => {
    const bucket = { algorithm: 'token-bucket' as const, limit: 10, periodMs: 1_000, burst: 5 }
    let g: GcraState | undefined
    let b: TokenBucketState | undefined
    let t = T0
    for (let i = 0; i < 2_000; i++) {
      t += (i * 7919) % 173
      const a = gcra.charge(g, policy, t, 1)
      const c = tokenBucket.charge(b, bucket, t, 1)
      expect(a.decision.allowed).toBe(c.decision.allowed)
      g = a.state
      b = c.state
    }
  })
})
