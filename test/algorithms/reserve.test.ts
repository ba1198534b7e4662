import { describe, expect, it } from 'vitest'
import { chargeKey, type KeyState, type Policy } from '../../src/algorithms'
import { handBackKey } from '../../src/algorithms/refund'
import {
  bucketHoldMs,
  isLeasable,
  leaseEndMs,
  MAX_LEASE_MS,
  reserveKey,
  type LeasablePolicy,
} from '../../src/algorithms/reserve'

const MINUTE = 60_000
const T0 = 1_700_000_040_000 // a minute boundary
const fixed: LeasablePolicy = { algorithm: 'fixed-window', limit: 10, periodMs: MINUTE }
const sliding: LeasablePolicy = { algorithm: 'sliding-window', limit: 10, periodMs: MINUTE }
const bucket: LeasablePolicy = {
  algorithm: 'token-bucket',
  limit: 10,
  periodMs: MINUTE,
  burst: 10,
}
const gcra: LeasablePolicy = { algorithm: 'gcra', limit: 10, periodMs: MINUTE, burst: 10 }
const ALL = [fixed, sliding, bucket, gcra]

/** The key after `units` cost-1 charges at `nowMs`. */
function spent(policy: Policy, units: number, nowMs = T0): KeyState | undefined {
  let key: KeyState | undefined
  for (let i = 0; i < units; i++) key = chargeKey(key, policy, nowMs, 1).state
  return key
}

/** How many cost-1 requests the key still admits at `nowMs`. */
function admits(key: KeyState | undefined, policy: Policy, nowMs = T0): number {
  let count = 0
  while (count < 100) {
    const outcome = chargeKey(key, policy, nowMs, 1)
    if (!outcome.decision.allowed) break
    key = outcome.state
    count++
  }
  return count
}

describe('reserveKey', () => {
  it.each(ALL)(
    'grants at most half of what is left when that covers the ask (the need at least), else all that is left ($algorithm)',
    (policy) => {
      const cases: [used: number, units: number, minUnits: number, granted: number][] = [
        [0, 3, 1, 3], // room 10, half 5: all 3
        [0, 8, 1, 5], // half of 10
        [0, 8, 7, 7], // the need wins over the half
        [6, 8, 0, 4], // room 4, less than asked: all of it
        [9, 8, 1, 1], // the last unit
        [10, 8, 1, 0], // none left: denied
        [8, 8, 3, 0], // 2 left, 3 needed: denied, nothing charged
      ]
      for (const [used, units, minUnits, granted] of cases) {
        const key = spent(policy, used)
        const reserved = reserveKey(key, policy, T0, { units: units, minUnits: minUnits })
        expect({ used, units, minUnits, granted: reserved.granted }).toEqual({
          used,
          units,
          minUnits,
          granted,
        })
        // The grant was charged, and nothing else: the key admits exactly what is left.
        expect(admits(reserved.state, policy)).toBe(10 - used - granted)
        expect(reserved.decision.allowed).toBe(granted > 0)
        if (granted === 0) expect(reserved.decision.retryAfterMs).toBeGreaterThan(0)
      }
    }
  )

  it('denies as the exact path would: a penalty locks the key, but not for a refill ahead', () => {
    const locking: LeasablePolicy = { ...fixed, penaltyMs: 5 * MINUTE }
    const full = spent(locking, 10)
    const ahead = reserveKey(full, locking, T0, { units: 5, minUnits: 0 })
    expect(ahead.granted).toBe(0)
    expect(ahead.state).toBe(full)
    const denied = reserveKey(full, locking, T0, { units: 5, minUnits: 1 })
    expect(denied.granted).toBe(0)
    expect(denied.state?.blockedUntilMs).toBe(T0 + 5 * MINUTE)
    expect(denied.decision.retryAfterMs).toBe(5 * MINUTE)
  })

  it('ends a lease with its window, and after MAX_LEASE_MS whatever the algorithm', () => {
    expect(leaseEndMs(fixed, T0 + 1_000)).toBe(T0 + 1_000 + MAX_LEASE_MS)
    expect(leaseEndMs(fixed, T0 + MINUTE - 10)).toBe(T0 + MINUTE)
    expect(leaseEndMs(sliding, T0 + MINUTE - 10)).toBe(T0 + MINUTE)
    expect(leaseEndMs(bucket, T0 + MINUTE - 10)).toBe(T0 + MINUTE - 10 + MAX_LEASE_MS)
    expect(
      reserveKey(undefined, sliding, T0 + MINUTE - 10, { units: 2, minUnits: 1 }).validUntilMs
    ).toBe(T0 + MINUTE)
  })

  it("holds a bucket's tokens no longer than 0.9 of the time it takes to refill its burst", () => {
    const fast: LeasablePolicy = { ...bucket, limit: 6_000_000, burst: 100_000 }
    expect(bucketHoldMs(fast)).toBe(900) // a burst of one second of the rate
    expect(leaseEndMs(fast, T0)).toBe(T0 + 900)
    expect(bucketHoldMs({ ...gcra, limit: 6_000_000, burst: 1 })).toBe(1)
    expect(bucketHoldMs(bucket)).toBe(MAX_LEASE_MS)
    expect(reserveKey(undefined, fast, T0, { units: 10, minUnits: 1 }).validUntilMs).toBe(T0 + 900)
  })

  it('leases four algorithms only', () => {
    expect(ALL.every(isLeasable)).toBe(true)
    expect(isLeasable({ algorithm: 'sliding-log', limit: 1, periodMs: 1 })).toBe(false)
  })
})

/** The span of units reserved at `ms` in a window (spendable from then). */
const at = (ms: number) => ({ validFromMs: ms, validUntilMs: ms + MAX_LEASE_MS })

describe('handBackKey: refund', () => {
  type Row = [
    name: string,
    policy: LeasablePolicy,
    reservedAtMs: number,
    refundAtMs: number,
    admitsAfter: number,
  ]
  // 6 of 10 units reserved at the reservation time, 4 of them handed back at the refund time.
  const rows: Row[] = [
    ['fixed window, same window', fixed, T0, T0 + 30_000, 8],
    ['fixed window, next window: nothing to give back', fixed, T0, T0 + MINUTE + 1, 10],
    ['sliding window, same window', sliding, T0, T0 + 30_000, 8],
    // Lapsed at the window's end: half a window on, the 6 weighed 3 (admits 7); now 2 weigh 1.
    ['sliding window, the window just ended', sliding, T0, T0 + MINUTE + 30_000, 9],
    ['sliding window, two windows on: nothing to give back', sliding, T0, T0 + 2 * MINUTE, 10],
    ['token bucket, tokens back', bucket, T0, T0, 8],
    // The hold lapsed 10 s in: the 6 tokens count as spent, 20 s refill 3.3 of them.
    ['token bucket, after the hold lapsed: nothing to give back', bucket, T0, T0 + 30_000, 7],
    ['gcra, TAT moved back', gcra, T0, T0, 8],
    ['gcra, after the hold lapsed: nothing to give back', gcra, T0, T0 + 30_000, 7],
  ]
  it.each(rows)('%s', (_name, policy, reservedAtMs, refundAtMs, admitsAfter) => {
    const reserved = reserveKey(undefined, policy, reservedAtMs, { units: 6, minUnits: 6 })
    expect(reserved.granted).toBe(6)
    const lot = { validFromMs: reservedAtMs, validUntilMs: reserved.validUntilMs }
    const key = handBackKey('refund', reserved.state, policy, refundAtMs, 4, lot)
    expect(admits(key, policy, refundAtMs)).toBe(admitsAfter)
  })

  it('never counts below zero, and keeps the very state when nothing changes', () => {
    const key = spent(fixed, 2)
    expect(handBackKey('refund', key, fixed, T0, 5, at(T0))?.state).toEqual({
      windowStartMs: T0,
      count: 0,
    })
    const stale = handBackKey('refund', key, fixed, T0 + MINUTE, 1, at(T0))
    expect(stale).toBe(key)
    expect(handBackKey('refund', undefined, bucket, T0, 3, at(T0))).toBeUndefined()
    const slidingKey = spent(sliding, 3)
    expect(handBackKey('refund', slidingKey, sliding, T0 + 1, 9, at(T0))?.state).toMatchObject({
      current: 0,
    })
  })

  it('keeps a penalty lock as it is', () => {
    const locked: KeyState = { state: { windowStartMs: T0, count: 10 }, blockedUntilMs: T0 + 999 }
    expect(handBackKey('refund', locked, fixed, T0, 3, at(T0))).toEqual({
      state: { windowStartMs: T0, count: 7 },
      blockedUntilMs: T0 + 999,
    })
  })
})

describe('handBackKey: spent', () => {
  // A unit a second, burst 10: 8 reserved at T0 (held 9 s), all spent at once, reported 2 s in.
  const quick: LeasablePolicy[] = [
    { algorithm: 'token-bucket', limit: 60, periodMs: MINUTE, burst: 10 },
    { algorithm: 'gcra', limit: 60, periodMs: MINUTE, burst: 10 },
  ]
  const reportedAtMs = T0 + 2_000
  const lotOf = (reserved: { validUntilMs: number }) => ({
    validFromMs: T0,
    validUntilMs: reserved.validUntilMs,
  })

  it.each(quick)(
    'lets a bucket refill past a hold once its units are reported spent ($algorithm)',
    (policy) => {
      const reserved = reserveKey(undefined, policy, T0, { units: 8, minUnits: 8 })
      expect(reserved.validUntilMs).toBe(T0 + 9_000)
      const later = T0 + 8_000
      // Held, the 8 keep the bucket at 2 until the hold lapses.
      expect(admits(reserved.state, policy, later)).toBe(2)
      const key = handBackKey('spent', reserved.state, policy, reportedAtMs, 8, lotOf(reserved))
      // Reported spent 2 s in, they stop counting then: 6 s refill 6 more.
      expect(admits(key, policy, later)).toBe(8)
    }
  )

  it.each(quick)(
    'releases no more than is held, and nothing once the hold lapsed ($algorithm)',
    (policy) => {
      const reserved = reserveKey(undefined, policy, T0, { units: 8, minUnits: 8 })
      const lot = lotOf(reserved)
      const over = handBackKey('spent', reserved.state, policy, reportedAtMs, 50, lot)
      expect(over).toEqual(handBackKey('spent', reserved.state, policy, reportedAtMs, 8, lot))
      expect(handBackKey('spent', reserved.state, policy, reserved.validUntilMs + 1, 8, lot)).toBe(
        reserved.state
      )
      const elsewhere = { validFromMs: T0, validUntilMs: reserved.validUntilMs + 5_000 }
      expect(handBackKey('spent', reserved.state, policy, reportedAtMs, 8, elsewhere)).toBe(
        reserved.state
      )
    }
  )

  it.each([fixed, sliding])(
    'leaves a window as it is: its spends were counted ($algorithm)',
    (policy) => {
      const reserved = reserveKey(undefined, policy, T0, { units: 8, minUnits: 8 })
      expect(handBackKey('spent', reserved.state, policy, reportedAtMs, 8, lotOf(reserved))).toBe(
        reserved.state
      )
    }
  )
})
