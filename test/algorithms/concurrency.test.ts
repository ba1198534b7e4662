import { describe, expect, it } from 'vitest'
import {
  concurrency,
  nextLeaseExpiryMs,
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
    const a = concurrency.charge(undefined, policy, T0, 1)
    const b = concurrency.charge(a.state, policy, T0 + 1, 1)
    const c = concurrency.charge(b.state, policy, T0 + 2, 1)
    expect([a, b, c].map((o) => o.decision.allowed)).toEqual([true, true, false])
    expect(a.decision.leaseId).not.toBe(b.decision.leaseId)
    // No release seen yet and leases 1 ms old: the estimate's floor, not the 60 s lease.
    expect(c.decision).toMatchObject({ remaining: 0, retryAfterMs: 1_000 })
    expect(c.state).toBe(b.state)
  })

  it('frees a slot on release', () => {
    const a = concurrency.charge(undefined, policy, T0, 1)
    const b = concurrency.charge(a.state, policy, T0, 1)
    const released = releaseLease(b.state as ConcurrencyState, a.decision.leaseId!, policy, T0)
    expect(concurrency.charge(released, policy, T0, 1).decision.allowed).toBe(true)
  })

  it('frees a slot whose holder never released it once the lease runs out', () => {
    const a = concurrency.charge(undefined, policy, T0, 1)
    const b = concurrency.charge(a.state, policy, T0, 1)
    expect(concurrency.charge(b.state, policy, T0 + 59_999, 1).decision.allowed).toBe(false)
    expect(concurrency.charge(b.state, policy, T0 + 60_000, 1).decision.allowed).toBe(true)
    expect(concurrency.expiresAtMs(b.state!, policy)).toBe(T0 + 60_000)
  })

  it('looks without taking a slot at cost 0', () => {
    const a = concurrency.charge(undefined, policy, T0, 1)
    const look = concurrency.charge(a.state, policy, T0, 0)
    expect(look.decision).toMatchObject({ allowed: true, remaining: 1 })
    expect(look.state).toBe(a.state)
  })
})

/** Takes a slot at `atMs` and releases it `heldMs` later. */
function holdFor(state: ConcurrencyState | undefined, atMs: number, heldMs: number) {
  const taken = concurrency.charge(state, policy, atMs, 1)
  return releaseLease(taken.state!, taken.decision.leaseId!, policy, atMs + heldMs)
}

/** The state with both slots taken at `atMs` (on top of `state`). */
function full(state: ConcurrencyState | undefined, atMs: number) {
  const a = concurrency.charge(state, policy, atMs, 1)
  return concurrency.charge(a.state, policy, atMs, 1).state
}

const retryAfterAt = (state: ConcurrencyState | undefined, nowMs: number) =>
  concurrency.charge(state, policy, nowMs, 1).decision.retryAfterMs

describe("concurrency limit's Retry-After estimate", () => {
  it('keeps an exponentially weighted mean of how long released slots were held', () => {
    const once = holdFor(undefined, T0, 2_000)
    expect(once).toMatchObject({ leases: [], holdMs: 2_000, holdAtMs: T0 + 2_000 })
    // 2 s + 1/4 of (6 s - 2 s)
    expect(holdFor(once, T0 + 10_000, 6_000).holdMs).toBe(3_000)
  })

  it('expects the youngest lease to end after the mean hold time', () => {
    const state = full(holdFor(undefined, T0, 2_000), T0 + 5_000)
    expect(retryAfterAt(state, T0 + 5_500)).toBe(1_500)
  })

  it('never answers less than 1 s', () => {
    const state = full(holdFor(undefined, T0, 1_200), T0 + 5_000)
    expect(retryAfterAt(state, T0 + 6_000)).toBe(1_000)
  })

  it('expects a lease held past the mean, or with no release seen, to last as long again', () => {
    expect(retryAfterAt(full(undefined, T0), T0 + 7_000)).toBe(7_000)
    const state = full(holdFor(undefined, T0, 1_000), T0 + 10_000)
    expect(retryAfterAt(state, T0 + 14_000)).toBe(4_000)
  })

  it('never points past the first lease expiry, when a slot is certain to free', () => {
    const state = full(undefined, T0)
    expect(retryAfterAt(state, T0 + 45_000)).toBe(15_000)
    expect(nextLeaseExpiryMs(state, T0 + 45_000)).toBe(T0 + 60_000)
    expect(nextLeaseExpiryMs(state, T0 + 60_000)).toBeUndefined()
  })

  it('remembers the mean for one lease after the last release', () => {
    const state = holdFor(undefined, T0, 2_000)
    expect(concurrency.expiresAtMs(state, policy)).toBe(T0 + 2_000 + 60_000)
    expect(concurrency.expiresAtMs(full(state, T0 + 3_000)!, policy)).toBe(T0 + 63_000)
  })

  it('ignores the release of a lease it does not hold', () => {
    const state = full(undefined, T0)!
    expect(releaseLease(state, 'unknown', policy, T0 + 1)).toBe(state)
  })
})
