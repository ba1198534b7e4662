import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import {
  askUnits,
  batchCap,
  batchSize,
  horizonFor,
  LOCATION_PACING,
  planStableUntilMs,
  rampShare,
  refillPlan,
  ROOT_PACING,
  scarceWaitMs,
  shareOfHeld,
  spreadOf,
  type LesseeState,
  type RefillPlan,
} from '../../../src/limiter/leased/lease-sizing'

const MINUTE = 60_000
const window: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }
const bucket: LeasablePolicy = {
  algorithm: 'token-bucket',
  limit: 6_000_000,
  periodMs: MINUTE,
  burst: 6_000_000,
}
/** 100 units a second, a 2 s horizon, a 20 ms round trip. */
const lessee = (fields: Partial<LesseeState> = {}): LesseeState => ({
  ratePerMs: 0.1,
  horizonMs: 2_000,
  roundTripMs: 20,
  spread: 0.5,
  scarce: false,
  ...fields,
})
/** 10 s into a minute's window. */
const early = 10 * MINUTE + 10_000

describe('horizonFor', () => {
  it('grows with the lessees so that calls per second stay at the target, within bounds', () => {
    expect(horizonFor(300, ROOT_PACING)).toBe(2_000)
    expect(horizonFor(3_000, ROOT_PACING)).toBe(ROOT_PACING.maxHorizonMs)
    expect(horizonFor(1, ROOT_PACING)).toBe(ROOT_PACING.minHorizonMs)
    expect(horizonFor(10, LOCATION_PACING)).toBe(LOCATION_PACING.minHorizonMs)
    expect(horizonFor(0, LOCATION_PACING)).toBe(LOCATION_PACING.minHorizonMs)
    // At most a quarter of the key's period.
    expect(horizonFor(300, ROOT_PACING, 1_000)).toBe(250)
    expect(horizonFor(300, ROOT_PACING, 60_000)).toBe(2_000)
  })
})

describe('batchSize', () => {
  it('holds one and a half horizons of demand, at most an eighth of the capacity', () => {
    expect(batchSize(window, 0.1, 2_000, early)).toBe(300)
    expect(batchSize(window, 10_000, 2_000, early)).toBe(batchCap(window))
    expect(batchCap(window)).toBe(750_000)
  })

  it('holds nothing for a key slower than a unit over that time', () => {
    expect(batchSize(window, 0.0001, 2_000, early)).toBe(0)
  })

  it("shrinks to the window's rest near its end, with a margin", () => {
    const nearEnd = 11 * MINUTE - 1_000
    // 100 to go: 1.25 × 100 would be 125; three standard deviations (30) are more.
    expect(batchSize(window, 0.1, 2_000, nearEnd)).toBe(130)
    expect(batchSize(window, 0.1, 2_000, nearEnd, 1)).toBe(100)
    // 1,000 to go: 1.25 × 1,000, more than 1,000 + 3 × 31.6.
    expect(batchSize(window, 1, 2_000, nearEnd)).toBe(1_250)
    expect(batchSize(bucket, 0.1, 2_000, nearEnd)).toBe(300)
  })

  it('holds three standard deviations over the demand to the end when that is more', () => {
    // 4 requests to go: 4 + 3 × 2, not 1.25 × 4 (a Poisson count of mean 4 passes 5 a third of
    // the time, and the lessee then calls for each request left).
    const nearEnd = 11 * MINUTE - 40
    expect(batchSize(window, 0.1, 2_000, nearEnd)).toBe(10)
    expect(batchSize(window, 0.1, 2_000, nearEnd, 1)).toBe(4)
  })
})

describe("a bucket's batch", () => {
  it('is what its lessee spends while the tokens are held, no more', () => {
    // Burst of one second of the rate: tokens are held 900 ms.
    const fast: LeasablePolicy = { ...bucket, burst: 100_000 }
    expect(batchSize(fast, 0.1, 2_000, early)).toBe(90)
    expect(batchSize(fast, 0.1, 200, early)).toBe(30)
  })
})

describe('refillPlan', () => {
  it('refills at half a horizon of demand, and asks for the next window only near its start', () => {
    const plan = refillPlan(window, lessee(), early)
    expect(plan).toMatchObject({
      batch: 300,
      refillBelow: 100,
      aheadWanted: false,
      aheadDue: false,
    })
    expect(plan.nextWindowMs).toBe(11 * MINUTE)
    const late = refillPlan(window, lessee(), 11 * MINUTE - 3_000)
    expect(late).toMatchObject({ aheadWanted: true, aheadDue: true, nextBatch: 300 })
  })

  it('asks ahead sooner by the horizons a tier with a tier below it is given, in its own horizon', () => {
    // 1,000 ms horizon: alone between 1 and 2 s before the end; with two, between 2 and 3 s.
    const at = (leftMs: number, fields: Partial<LesseeState> = {}) =>
      refillPlan(window, lessee({ horizonMs: 1_000, spread: 0.5, ...fields }), 11 * MINUTE - leftMs)
    expect(at(2_400)).toMatchObject({ aheadWanted: false, aheadDue: false })
    expect(at(2_400, { aheadHorizons: 2 })).toMatchObject({ aheadWanted: true, aheadDue: true })
    expect(at(2_800, { aheadHorizons: 2 })).toMatchObject({ aheadWanted: true, aheadDue: false })
    // Timed in a longer horizon than the one its batch is sized by (a region's least).
    const timed = { horizonMs: 200, aheadHorizons: 2, aheadHorizonMs: 1_000 }
    expect(at(2_400, timed)).toMatchObject({ aheadWanted: true, aheadDue: true })
    expect(at(2_400, { horizonMs: 200, aheadHorizons: 2 })).toMatchObject({ aheadDue: false })
  })

  it('holds at least two round trips of demand when the lessor is far', () => {
    // A 50 ms horizon, a 300 ms round trip: two refills' travel is 2 × (2 × 300 + 10) ms.
    const far = refillPlan(window, lessee({ horizonMs: 50, roundTripMs: 300 }), early)
    expect(far.batch).toBe(Math.ceil(0.1 * 2 * 610))
    expect(far.refillBelow).toBeCloseTo(0.1 * 610, 6)
    expect(refillPlan(window, lessee({ horizonMs: 50, roundTripMs: 0 }), early).batch).toBe(8)
  })

  it('stops refilling in the last half horizon of a window', () => {
    expect(refillPlan(window, lessee(), 11 * MINUTE - 900).refillBelow).toBe(0)
    expect(refillPlan(bucket, lessee(), 11 * MINUTE - 900).refillBelow).toBeGreaterThan(0)
  })

  it("holds only a scarce key's demand until the lessee's next ask", () => {
    for (const spread of [0, 0.5, 0.99]) {
      const plan = refillPlan(window, lessee({ scarce: true, spread }), early)
      const untilNextAsk = scarceWaitMs(2_000, spread) + 2 * 20 + 10
      expect(plan.batch).toBe(Math.ceil(0.1 * untilNextAsk))
      expect(plan.batch).toBeLessThan(refillPlan(window, lessee({ spread }), early).batch)
    }
  })
})

describe('askUnits', () => {
  const plan: RefillPlan = {
    batch: 100,
    nextBatch: 80,
    nextWindowMs: 60_000,
    keepAtMost: 200,
    refillBelow: 50,
    aheadWanted: true,
    aheadDue: false,
  }
  const held = { now: 30, soon: 40, later: 20 }

  it('asks for the waiting demand and what tops the held units (for later too) up to a batch', () => {
    expect(askUnits(plan, held, 5, false, false)).toEqual({ units: 65, nextUnits: 0 })
    // A background refill: the batch less everything held.
    expect(askUnits(plan, held, 0, false, false).units).toBe(30)
    // No refill now (the window's last half horizon): only the demand.
    expect(askUnits({ ...plan, refillBelow: 0 }, held, 5, false, false).units).toBe(5)
  })

  it('asks a scarce key for the demand, or the batch less what it holds if more, not both', () => {
    expect(askUnits(plan, held, 5, true, false).units).toBe(30)
    expect(askUnits(plan, held, 50, true, false).units).toBe(50)
    expect(askUnits({ ...plan, refillBelow: 0 }, held, 5, true, false).units).toBe(30)
  })

  it("asks for the next window's batch less what it holds of it, only when wanted and open", () => {
    expect(askUnits(plan, held, 0, false, true).nextUnits).toBe(60)
    expect(askUnits({ ...plan, aheadWanted: false }, held, 0, false, true).nextUnits).toBe(0)
    expect(askUnits(plan, { ...held, later: 90 }, 0, false, true).nextUnits).toBe(0)
  })
})

describe('scarceWaitMs and spreadOf', () => {
  it('spread lessees over three quarters to five quarters of a horizon', () => {
    const spreads = Array.from({ length: 1_000 }, (_, i) => spreadOf(`isolate-${i}`))
    expect(Math.min(...spreads)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...spreads)).toBeLessThan(1)
    const mean = spreads.reduce((sum, spread) => sum + spread, 0) / spreads.length
    expect(mean).toBeGreaterThan(0.45)
    expect(mean).toBeLessThan(0.55)
    expect(scarceWaitMs(2_000, 0)).toBe(1_500)
    expect(scarceWaitMs(2_000, 0.5)).toBe(2_000)
    expect(spreadOf('a')).toBe(spreadOf('a'))
  })
})

describe('planStableUntilMs', () => {
  it('is a time before which the plan made now is the plan made then', () => {
    const lessee = fc.record({
      ratePerMs: fc.double({ min: 0, max: 50, noNaN: true }),
      horizonMs: fc.integer({ min: 1, max: 4_000 }),
      roundTripMs: fc.integer({ min: 0, max: 600 }),
      spread: fc.double({ min: 0, max: 0.999, noNaN: true }),
      scarce: fc.boolean(),
      waitMs: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }),
    })
    fc.assert(
      fc.property(
        fc.constantFrom(window, bucket),
        lessee,
        fc.integer({ min: 0, max: MINUTE - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (policy, state, offsetMs, share) => {
          const { waitMs, ...rest } = state
          const known: LesseeState = waitMs === undefined ? rest : { ...rest, waitMs }
          const nowMs = 10 * MINUTE + offsetMs
          const plan = refillPlan(policy, known, nowMs)
          const untilMs = Math.min(planStableUntilMs(known, plan), nowMs + MINUTE)
          if (untilMs <= nowMs) return
          const laterMs = nowMs + Math.floor(share * (untilMs - 1 - nowMs))
          expect(refillPlan(policy, known, laterMs)).toEqual(plan)
        }
      )
    )
  })
})

describe('rampShare', () => {
  // 100 a ms; the ramp spans 40 slots of 50 ms: 2 s, room for 200,000.
  const hot: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }

  it("is a lessee's demand over the ramp while the lessees' demand is within the limit's rate", () => {
    expect(rampShare(hot, 0.5, 80)).toBe(1_000)
  })

  it("shrinks every share alike once their demand exceeds it: together they fit the ramp's room", () => {
    const shares = [30, 50, 70].map((rate) => rampShare(hot, rate, 150)!)
    expect(shares).toEqual([40_000, 66_667, 93_334])
    expect(shares.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(200_000 + 3)
  })

  it('caps nothing for a lessee that did not say its demand', () => {
    expect(rampShare(hot, undefined, 150)).toBeUndefined()
  })
})

describe('shareOfHeld', () => {
  it('gives a take all it wants when none waits beside it', () => {
    expect(shareOfHeld(100, 1, 50, 0)).toBe(50)
    expect(shareOfHeld(30, 1, 50, 0)).toBe(30)
  })

  it('shares by what each wants among takes woken in turn, never below a need', () => {
    // Three takes wanting 60, 30 and 10 of a grant of 50, woken in that order.
    const wants = [60, 30, 10]
    let left = 50
    const given = wants.map((want, i) => {
      const others = wants.slice(i + 1).reduce((a, b) => a + b, 0)
      const units = shareOfHeld(left, 1, want, others)
      left -= units
      return units
    })
    expect(given).toEqual([30, 15, 5])
    // A need above its share is met whole.
    expect(shareOfHeld(10, 5, 50, 1_000)).toBe(5)
  })

  it('never gives more than is held, nor less than the need, nor more than wanted', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (need, extra, spare, othersWant) => {
          const want = need + extra
          const available = need + spare
          const units = shareOfHeld(available, need, want, othersWant)
          return units >= need && units <= want && units <= available
        }
      )
    )
  })
})
