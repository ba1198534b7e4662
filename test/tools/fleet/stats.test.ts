import { describe, expect, it } from 'vitest'
import { quantile, rateOf, settledAt } from '../../../tools/fleet/stats'

describe('fleet stats', () => {
  it.each([
    [0.5, 2],
    [0.99, 4],
    [0, 1],
    [1, 4],
  ])('quantile %d of 4, 1, 3, 2 is %d (nearest rank)', (q, expected) => {
    expect(quantile([4, 1, 3, 2], q)).toBe(expected)
  })

  it('has no quantile of nothing', () => {
    expect(quantile([], 0.5)).toBeNull()
  })

  it('counts a missing second as 0 in the mean, and finds the busiest', () => {
    const perSecond = new Map([
      [10, 4],
      [12, 8],
    ])
    expect(rateOf(perSecond, 10, 13)).toEqual({ mean: 4, peak: 8 })
  })

  it('finds the first second from which values hold near the steady one', () => {
    const values = new Map([
      [0, 0.2],
      [1, 0.97],
      [2, 0.5],
      [3, 0.98],
      [4, 0.99],
      [5, 0.97],
    ])
    expect(settledAt(values, 0.98, 0, 6, 0.05)).toBe(3)
    expect(settledAt(values, 0.98, 0, 5, 0.05)).toBeNull()
  })
})
