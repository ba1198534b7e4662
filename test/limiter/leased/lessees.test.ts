import { describe, expect, it } from 'vitest'
import { Lessees, RATE_TTL_MS } from '../../../src/limiter/leased/lessees'

describe("a lessor's lessees", () => {
  it('sum the demand they said, and expect as much again from each that said none yet', () => {
    const lessees = new Lessees()
    expect(lessees.expectedRatePerMs(0)).toBeUndefined()
    lessees.note('cold-1', 0)
    // None said its demand: nothing to go by.
    expect(lessees.expectedRatePerMs(0)).toBeUndefined()
    lessees.note('busy', 1, 0.3)
    lessees.note('calm', 2, 0.1)
    lessees.note('cold-2', 3)
    expect(lessees.ratePerMs(3)).toBeCloseTo(0.4, 9)
    // Two cold ones at the mean of the other two (0.2 each).
    expect(lessees.expectedRatePerMs(3)).toBeCloseTo(0.8, 9)
    // Once a cold one says its own, that counts instead.
    lessees.note('cold-1', 4, 0.5)
    expect(lessees.expectedRatePerMs(4)).toBeCloseTo(0.9 + 0.3, 9)
    // Lessees not heard from lately count for nothing, said or not.
    const laterMs = 2 * RATE_TTL_MS
    lessees.note('busy', laterMs, 0.5)
    lessees.note('cold-3', laterMs)
    expect(lessees.expectedRatePerMs(laterMs)).toBeCloseTo(1, 9)
  })
})
