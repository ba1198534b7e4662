import { describe, expect, it } from 'vitest'
import { coldIsolates, windowShare } from '../../../tools/scale/summary'

const row = (admitted: number, idealAdmitted: number) => ({ admitted, idealAdmitted })

describe('windowShare', () => {
  it('compares each whole window after the first, leaving out the first and a partial last', () => {
    const rows = [
      row(0, 10),
      row(50, 10), // the first window: its room carried over from the warm-up
      row(9, 10),
      row(9, 10),
      row(10, 10),
      row(10, 10),
      row(0, 10), // a window the run did not finish
    ]
    expect(windowShare(rows, 2)).toEqual({ mean: 38 / 40, min: 0.9 })
  })

  it('is null when the run has no whole window after the first', () => {
    expect(windowShare([row(1, 1), row(1, 1), row(1, 1)], 2)).toBeNull()
  })
})

describe('coldIsolates', () => {
  it("gives each isolate's first wait and what it waited past one round trip, none below 0", () => {
    // A hundred isolates: 98 answered in their round trip of 5 ms, one after a 1 ms queue,
    // one whose object called up a tier first (40 ms).
    const waits = [...Array.from({ length: 98 }, () => [5, 5] as const), [6, 5], [45, 5]] as const
    expect(coldIsolates(waits)).toEqual({
      count: 100,
      waitMs: { p50: 5, p99: 45, max: 45 },
      overRoundTripMs: { p50: 0, p99: 40, max: 40 },
    })
    // An answer sooner than the round trip (a decision in the isolate) is not below 0.
    expect(coldIsolates([[0, 5]]).overRoundTripMs).toEqual({ p50: 0, p99: 0, max: 0 })
    expect(coldIsolates([]).waitMs).toEqual({ p50: null, p99: null, max: null })
  })
})
