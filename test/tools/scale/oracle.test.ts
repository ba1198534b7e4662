import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { Bounds } from '../../../tools/scale/bounds'
import { Judge } from '../../../tools/scale/judge'
import { oracleFor } from '../../../tools/scale/oracle'

const T0 = 1_800_000_000_000

describe('exact oracles', () => {
  it('sliding window: refuses the 11th of 10 in a window, and weighs the previous window', () => {
    const oracle = oracleFor({ algorithm: 'sliding-window', limit: 10, periodMs: 1000 })
    for (let i = 0; i < 10; i++) expect(oracle.admit(T0 + 100, 1)).toBe(true)
    expect(oracle.admit(T0 + 999, 1)).toBe(false)
    // Halfway through the next window, half of the previous 10 still count.
    expect(oracle.room(T0 + 1500)).toBe(5)
    expect(oracle.fits(T0 + 1500, 6)).toBe(false)
    expect(oracle.admit(T0 + 1500, 5)).toBe(true)
    expect(oracle.room(T0 + 1500)).toBe(0)
  })

  it('fixed window: counts in the aligned window only', () => {
    const oracle = oracleFor({ algorithm: 'fixed-window', limit: 3, periodMs: 1000 })
    expect([1, 2, 3, 4].map(() => oracle.admit(T0 + 999, 1))).toEqual([true, true, true, false])
    expect(oracle.room(T0 + 1000)).toBe(3)
  })

  it.each(['token-bucket', 'gcra'] as const)(
    '%s: a stream from a full bucket conforms up to the burst, then at the rate',
    (algorithm) => {
      const oracle = oracleFor({ algorithm, limit: 10, periodMs: 1000, burst: 5 })
      expect([1, 2, 3, 4, 5, 6].map(() => oracle.admit(T0, 1))).toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
      ])
      expect(oracle.fits(T0 + 99, 1)).toBe(false)
      expect(oracle.admit(T0 + 100, 1)).toBe(true)
      expect(oracle.room(T0 + 1_000)).toBe(5)
    }
  )
})

describe('the judge', () => {
  const policy = { algorithm: 'sliding-window' as const, limit: 10, periodMs: 1000 }
  const judgeOf = (limit: LeasablePolicy) =>
    new Judge(() => new Bounds([limit]), limit.periodMs, 1, T0, 5_000)

  it('flags a constructed over-admission, and the fullest window', () => {
    const judge = judgeOf(policy)
    for (let i = 0; i < 12; i++) judge.admitted(T0 + 10 + i, 1)
    judge.flush(Number.POSITIVE_INFINITY)
    expect(judge.overAdmitted).toBe(2)
    expect(judge.overAdmittedPerSecond[0]).toBe(2)
    expect(judge.fullestWindow()).toBe(12)
  })

  it('judges decisions in time order, whatever order they came in', () => {
    const judge = judgeOf(policy)
    // Ten admissions decided at 900 ms reach the judge after a denial decided at 950 ms.
    judge.denied(T0 + 950, 1)
    for (let i = 0; i < 10; i++) judge.admitted(T0 + 900, 1)
    judge.flush(T0 + 2_000)
    expect(judge.overAdmitted).toBe(0)
    expect(judge.earlyPerSecond[0]).toBe(0)
    expect(judge.late).toBe(0)
  })

  it('counts a denial early only while the exact limit had room, and that room once', () => {
    const judge = judgeOf(policy)
    for (let i = 0; i < 8; i++) judge.admitted(T0 + 100, 1)
    for (let i = 0; i < 5; i++) judge.denied(T0 + 200, 1)
    // Later denials in the same window find the room taken by the early ones.
    for (let i = 0; i < 5; i++) judge.denied(T0 + 300 + i, 1)
    judge.flush(Number.POSITIVE_INFINITY)
    expect(judge.earlyPerSecond[0]).toBe(2)
    expect(judge.deniedPerSecond[0]).toBe(10)
    expect(judge.overAdmitted).toBe(0)
  })

  it('says what an exact limiter would have admitted of the arrivals', () => {
    const judge = judgeOf(policy)
    for (let i = 0; i < 15; i++) judge.arrived(T0 + i, 1)
    expect(judge.idealPerSecond[0]).toBe(10)
  })

  it('counts a decision older than what was judged as late, at the first open instant', () => {
    const judge = judgeOf(policy)
    judge.flush(T0 + 1_000)
    judge.admitted(T0 + 10, 1)
    expect(judge.late).toBe(1)
  })
})
