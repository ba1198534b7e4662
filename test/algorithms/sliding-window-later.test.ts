import { describe, expect, it } from 'vitest'
import { chargeKey, type KeyState } from '../../src/algorithms'
import { handBackKey } from '../../src/algorithms/refund'
import { reserveKey, type LeasablePolicy, type Reserved } from '../../src/algorithms/reserve'
import type { SlidingWindowState } from '../../src/algorithms/sliding-window'

const T0 = 1_800_000_000_000 // a minute boundary
/** 100 a second: a step of the ramp's time (50 ms) is 5 units of room as the previous slides out. */
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000, periodMs: 60_000 }

/** A key whose previous window was full and whose current one has been charged its room, at `atMs`. */
function shortKey(atMs: number): KeyState | undefined {
  const full = chargeKey(undefined, policy, T0 - 50_000, 6_000).state
  const room = chargeKey(full, policy, atMs, 0).decision.remaining
  return chargeKey(full, policy, atMs, room).state
}

/** The sliding estimate of what was really admitted, unit by unit, as an exact limiter sees it. */
function exactAdmits(previous: number, current: number) {
  return (atMs: number, units: number): boolean => {
    current += units
    return previous * (1 - (atMs - T0) / policy.periodMs) + current <= policy.limit + 1e-9
  }
}

const shortAsk = { units: 100, minUnits: 0, laterPerStep: 5 }

describe('units for later in a short sliding window', () => {
  it('grants what a short key lacks now from the room its previous window gives back later, step by step', () => {
    const key = shortKey(T0 + 10_000)
    const reserved = reserveKey(key, policy, T0 + 10_020, shortAsk)
    expect(reserved.scarce).toBe(true)
    const later = reserved.later ?? []
    // 2 of room came back in 20 ms and were granted now; the rest of the first step's 5 is
    // 3, then 5 a step.
    expect(reserved.granted).toBe(2)
    expect(later.map((grant) => grant.granted)).toEqual([3, ...new Array(later.length - 1).fill(5)])
    expect(reserved.granted + later.reduce((sum, grant) => sum + grant.granted, 0)).toBe(100)
    expect(later.map((grant) => grant.validFromMs - T0)).toEqual(
      Array.from({ length: later.length }, (_, j) => 10_050 + 50 * j)
    )
    expect(later.every((grant) => grant.validUntilMs === T0 + 20_020)).toBe(true)
    // Every unit spent the moment its step comes is one an exact limiter admits.
    const counted = (key!.state as SlidingWindowState).current
    const admits = exactAdmits(6_000, counted + reserved.granted)
    for (const grant of later) expect(admits(grant.validFromMs, grant.granted)).toBe(true)
  })

  it('grants nothing for later to a key with room, nor past the window’s end, nor without a share', () => {
    const roomy = chargeKey(undefined, policy, T0 + 10_000, 10).state
    expect(reserveKey(roomy, policy, T0 + 10_020, shortAsk).later).toBeUndefined()
    const nearEnd = reserveKey(shortKey(T0 + 59_880), policy, T0 + 59_880, shortAsk)
    expect(nearEnd.later?.map((grant) => grant.validFromMs - T0)).toEqual([59_900, 59_950])
    const noShare = reserveKey(shortKey(T0 + 10_000), policy, T0 + 10_020, {
      units: 100,
      minUnits: 0,
    })
    expect(noShare.later).toBeUndefined()
  })

  // Units for later come from a short key's asks and from the next window's ramp once that
  // window began: each case's first unit is due 50 ms after `startMs`, its last `lastMs` after.
  const sources = [
    {
      source: 'a short key’s grants for later',
      made: () => reserveKey(shortKey(T0 + 10_000), policy, T0 + 10_000, shortAsk),
      grants: (reserved: Reserved) => reserved.later!,
      startMs: T0 + 10_000,
      lastMs: 1_000,
    },
    {
      source: 'the ramp’s slots, once their window began',
      made: () =>
        reserveKey(chargeKey(undefined, policy, T0 + 10_000, 6_000).state, policy, T0 + 59_000, {
          units: 0,
          minUnits: 0,
          nextUnits: 1_000,
          rampOnly: true,
        }),
      grants: (reserved: Reserved) => reserved.ramp!,
      startMs: T0 + 60_000,
      lastMs: 2_000,
    },
  ]

  it.each(sources)(
    'counts $source from their time: the room they cover is not charged now',
    ({ made, startMs, lastMs }) => {
      const { state } = made()
      // 10 ms on, the previous window gave back 1 unit, but the first step (at 50 ms) holds 5.
      expect(chargeKey(state, policy, startMs + 10, 1).decision.allowed).toBe(false)
      // Past the last step, what comes back is room again.
      const after = chargeKey(state, policy, startMs + lastMs + 50, 5)
      expect(after.decision.allowed).toBe(true)
      expect(chargeKey(after.state, policy, startMs + lastMs + 50, 1).decision.allowed).toBe(false)
    }
  )

  it.each(sources)(
    'takes back $source from their step only, making room at its time, not now',
    ({ made, grants, startMs }) => {
      const reserved = made()
      const step = grants(reserved)[10]!
      const refunded = handBackKey('refund', reserved.state, policy, startMs + 10, 5, step)
      expect(chargeKey(refunded, policy, startMs + 10, 1).decision.allowed).toBe(false)
      expect(chargeKey(refunded, policy, startMs + 550, 5).decision.allowed).toBe(true)
      expect(chargeKey(refunded, policy, startMs + 550, 6).decision.allowed).toBe(false)
    }
  )

  it('reads a ramp stored by an earlier version as units for later', () => {
    const rampNow = new Array<number>(40).fill(5)
    const stored: KeyState = { state: { windowStartMs: T0, current: 0, previous: 6_000, rampNow } }
    // At 10 ms the previous gave back 1, held by the first slot; at 2.05 s, 5 past the ramp.
    expect(chargeKey(stored, policy, T0 + 10, 1).decision.allowed).toBe(false)
    expect(chargeKey(stored, policy, T0 + 2_050, 5).decision.allowed).toBe(true)
    expect(chargeKey(stored, policy, T0 + 2_050, 6).decision.allowed).toBe(false)
  })
})
