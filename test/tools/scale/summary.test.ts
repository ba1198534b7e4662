import { describe, expect, it } from 'vitest'
import { windowShare } from '../../../tools/scale/summary'

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
