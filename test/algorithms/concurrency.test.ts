import { describe, expect, it } from 'vitest'
import {
  concurrency,
  releaseLease,
  type ConcurrencyPolicy,
  type ConcurrencyState,
} from '../../src/algorithms'

const policy: ConcurrencyPolicy = {
  algorithm: 'concurrency',
  limit: 2,
  periodMs: 60_000,
  queue: 0,
  maxWaitMs: 1_000,
}
const T0 = 1_700_000_000_000

describe('concurrency limit', () => {
  it('grants a leased slot per request up to the limit, then denies until one frees', () => {
    const a = concurrency.consume(undefined, policy, T0, 1)
    const b = concurrency.consume(a.state, policy, T0 + 1, 1)
    const c = concurrency.consume(b.state, policy, T0 + 2, 1)
    expect([a, b, c].map((o) => o.decision.allowed)).toEqual([true, true, false])
    expect(a.decision.leaseId).not.toBe(b.decision.leaseId)
    expect(c.decision).toMatchObject({ remaining: 0, retryAfterMs: 60_000 - 2 })
    expect(c.state).toBe(b.state)
  })

  it('frees a slot on release', () => {
    const a = concurrency.consume(undefined, policy, T0, 1)
    const b = concurrency.consume(a.state, policy, T0, 1)
    const released = releaseLease(b.state as ConcurrencyState, a.decision.leaseId!)
    expect(concurrency.consume(released, policy, T0, 1).decision.allowed).toBe(true)
  })

  it('frees a slot whose holder never released it once the lease runs out', () => {
    const a = concurrency.consume(undefined, policy, T0, 1)
    const b = concurrency.consume(a.state, policy, T0, 1)
    expect(concurrency.consume(b.state, policy, T0 + 59_999, 1).decision.allowed).toBe(false)
    expect(concurrency.consume(b.state, policy, T0 + 60_000, 1).decision.allowed).toBe(true)
    expect(concurrency.expiresAtMs(b.state!, policy)).toBe(T0 + 60_000)
  })

  it('looks without taking a slot at cost 0', () => {
    const a = concurrency.consume(undefined, policy, T0, 1)
    const look = concurrency.consume(a.state, policy, T0, 0)
    expect(look.decision).toMatchObject({ allowed: true, remaining: 1 })
    expect(look.state).toBe(a.state)
  })
})
