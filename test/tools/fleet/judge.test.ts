import { describe, expect, it } from 'vitest'
import { judge, segmentsOf } from '../../../tools/fleet/judge'

const T0 = 1_800_000_000_000
const windows = (count: number, allowed: number) =>
  segmentsOf(T0, T0 + count * 1000, 1000, () => allowed)
const at = (sentMs: number, answeredMs = sentMs, cost = 1) => ({
  sentMs: T0 + sentMs,
  answeredMs: T0 + answeredMs,
  cost,
})

describe('fleet judge', () => {
  it('counts admissions per aligned window and none over when each fits', () => {
    const result = judge([at(10), at(20), at(1500)], windows(2, 2))
    expect(result.windows).toEqual([
      { startMs: T0, admitted: 2, allowed: 2 },
      { startMs: T0 + 1000, admitted: 1, allowed: 2 },
    ])
    expect(result.overAdmitted).toBe(0)
  })

  it('counts the units past the bound of a window', () => {
    expect(judge([at(10, 10, 3), at(20, 20, 3)], windows(1, 4)).overAdmitted).toBe(2)
  })

  it('places a request whose span crosses a window end where there is room', () => {
    // Window 0 is full; the straddler may have been decided just after its end.
    const result = judge([at(100), at(200), at(990, 1010)], windows(2, 2))
    expect(result.overAdmitted).toBe(0)
    expect(result.windows.map((w) => w.admitted)).toEqual([2, 1])
  })

  it('over-admits when no placement within the spans fits', () => {
    const result = judge([at(100), at(200), at(990, 1010), at(1100), at(1200)], windows(2, 2))
    expect(result.overAdmitted).toBe(1)
  })

  it('places earliest deadline first: a request that may wait leaves room to one that may not', () => {
    // The long one may go to either window; the short one only to window 0.
    const result = judge([at(500, 1500), at(900)], windows(2, 1))
    expect(result.overAdmitted).toBe(0)
  })

  it('starts a segment of its own at a reset: the count restarts', () => {
    const segments = segmentsOf(T0, T0 + 1000, 1000, () => 2, [T0 + 500])
    expect(segments.map((s) => s.startMs - T0)).toEqual([0, 500])
    const result = judge([at(100), at(200), at(600), at(700)], segments)
    expect(result.overAdmitted).toBe(0)
    expect(result.windows).toEqual([{ startMs: T0, admitted: 4, allowed: 2 }])
  })

  it('holds each window to what it allows (an edit lowers it)', () => {
    const segments = segmentsOf(T0, T0 + 2000, 1000, (start) => (start < T0 + 1000 ? 3 : 2))
    expect(judge([at(1100), at(1200), at(1300)], segments).overAdmitted).toBe(1)
  })
})
