import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import {
  offsetOf,
  rootNowOf,
  rootTimeOf,
  spanHere,
  windowEndHere,
} from '../../../src/limiter/leased/lease-clock'

const policy: LeasablePolicy = { algorithm: 'fixed-window', limit: 10, periodMs: 60_000 }

describe("a lessee's clock against its root's", () => {
  it('bounds the offset by the round trip, a ms more each way for whole-ms readings', () => {
    // Sent at 1,000, answered at 1,040 by this clock; the root read 5,020 when it answered.
    expect(offsetOf([5_020, 5_020], 1_000, 1_040)).toEqual({ lowMs: 3_979, highMs: 4_021 })
    // A location's object passes on what it knows: its own bounds widen the lessee's.
    expect(offsetOf([5_010, 5_030], 1_000, 1_040)).toEqual({ lowMs: 3_969, highMs: 4_031 })
    // One that has not heard from the root says nothing.
    expect(offsetOf(rootNowOf(undefined, 7), 1_000, 1_040)).toBeUndefined()
  })

  it("tells its own lessees the root's clock now, and plans by the middle of it", () => {
    const offset = { lowMs: -30, highMs: 10 }
    expect(rootNowOf(offset, 1_000)).toEqual([970, 1_010])
    expect(rootTimeOf(offset, 1_000)).toBe(990)
    expect(rootTimeOf(undefined, 1_000)).toBe(1_000)
  })

  it('spends a unit only while its span holds for every offset the bounds allow', () => {
    const offset = { lowMs: -30, highMs: 10 }
    // Granted now: spendable at once (its answer came after its charge), until 10 ms early.
    expect(
      spanHere(offset, { chargedAtMs: 1_000, validFromMs: 1_000, validUntilMs: 2_000 }, 1_000)
    ).toEqual({ fromMs: Number.NEGATIVE_INFINITY, untilMs: 1_990 })
    // For later: from 30 ms late, when the root's clock has surely passed its start.
    expect(
      spanHere(offset, { chargedAtMs: 1_000, validFromMs: 1_500, validUntilMs: 2_000 }, 1_000)
    ).toEqual({ fromMs: 1_530, untilMs: 1_990 })
    // Far ahead, narrowed further for the clocks' drift (200 ppm of the time to each end).
    expect(
      spanHere(offset, { chargedAtMs: 0, validFromMs: 60_970, validUntilMs: 120_970 }, 1_000)
    ).toEqual({ fromMs: 61_000 + 12, untilMs: 120_960 - 24 })
  })

  it("ends a window when the root's does, by this clock", () => {
    // 59,990 here is 60,000 at the root: the window [0, 60 s) has ended, [60 s, 120 s) ends then.
    expect(windowEndHere(policy, { lowMs: 0, highMs: 20 }, 59_990)).toBe(119_990)
    expect(windowEndHere(policy, undefined, 59_990)).toBe(60_000)
  })
})
