import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { backoffMs, DEFAULT_BACKOFF, waitMs } from '../../src/client/wait'

describe('waits', () => {
  it.each([
    // hint, retry, random, wait
    [undefined, 0, 0, 0],
    [undefined, 0, 0.5, 250],
    [undefined, 2, 0.5, 1_000],
    [undefined, 10, 0.999, 19_980],
    [3_000, 0, 0, 3_000],
    [3_000, 0, 0.5, 3_250],
    [3_000, 3, 0.5, 4_500],
    [60_000, 9, 0.5, 70_000],
    [0, 4, 0.9, 0],
  ])('hint %s, retry %i, random %d: %i ms', (hint, retry, random, wait) => {
    expect(waitMs(hint, retry, random)).toBe(wait)
  })

  it('doubles the backoff from the base up to the cap', () => {
    expect([0, 1, 2, 5, 6, 30].map((retry) => backoffMs(retry))).toEqual([
      500, 1_000, 2_000, 16_000, 20_000, 20_000,
    ])
  })

  it('never waits less than the hint, nor more than the hint plus min(hint, cap)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_400_000 }),
        fc.nat(64),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 120_000 }),
        (hint, retry, random, baseDelayMs, maxBackoffMs) => {
          const wait = waitMs(hint, retry, random, { baseDelayMs, maxBackoffMs })
          expect(wait).toBeGreaterThanOrEqual(hint)
          expect(wait).toBeLessThanOrEqual(hint + Math.min(hint, maxBackoffMs))
          expect(Number.isInteger(wait)).toBe(true)
        }
      ),
      { seed: 13 }
    )
  })

  it('without a hint, stays within the backoff of that retry', () => {
    fc.assert(
      fc.property(
        fc.nat(64),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, random) => {
          const wait = waitMs(undefined, retry, random)
          expect(wait).toBeGreaterThanOrEqual(0)
          expect(wait).toBeLessThan(Math.max(1, backoffMs(retry, DEFAULT_BACKOFF)))
        }
      ),
      { seed: 13 }
    )
  })
})
