import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { chargeKey, type KeyState } from '../../src/algorithms'
import { handBackKey } from '../../src/algorithms/refund'
import { reserveKey, type LeasablePolicy } from '../../src/algorithms/reserve'

const SECOND = 1_000
const T0 = 1_700_000_040_000 // a minute boundary

/** An exact limiter fed every unit spent, at the time it was spent: any it would refuse is over. */
function exactOracle(policy: LeasablePolicy) {
  const { limit, periodMs } = policy
  const burst = 'burst' in policy ? policy.burst : limit
  let level = burst
  let lastMs = T0
  const windows = new Map<number, number>()
  return (atMs: number): boolean => {
    if (policy.algorithm === 'token-bucket' || policy.algorithm === 'gcra') {
      level = Math.min(burst, level + ((atMs - lastMs) * limit) / periodMs)
      lastMs = atMs
      level -= 1
      return level >= -1e-9
    }
    const start = Math.floor(atMs / periodMs) * periodMs
    const current = (windows.get(start) ?? 0) + 1
    windows.set(start, current)
    if (policy.algorithm === 'fixed-window') return current <= limit
    const previous = windows.get(start - periodMs) ?? 0
    return previous * (1 - (atMs - start) / periodMs) + current <= limit + 1e-9
  }
}

/** A lot held by a lessee: units, and the span they may be spent in. */
interface Held {
  units: number
  validFromMs: number
  validUntilMs: number
  /** Units spent and not yet reported. */
  spent: number
}

type Step =
  | { kind: 'wait'; ms: number }
  | { kind: 'reserve'; units: number; ahead: boolean; rampOnly: boolean; later?: number }
  | { kind: 'charge' }
  | { kind: 'spend'; lot: number; units: number }
  | { kind: 'refund'; lot: number; units: number }
  | { kind: 'report'; lot: number; units: number }

// Waits are rarer than spends and charges, so that many land at one moment: where an excess shows.
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      ms: fc.integer({ min: 1, max: 6 * SECOND }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reserve' as const),
      units: fc.integer({ min: 1, max: 8 }),
      ahead: fc.boolean(),
      rampOnly: fc.boolean(),
      later: fc.integer({ min: 0, max: 3 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('charge' as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('spend' as const),
      lot: fc.nat(),
      units: fc.integer({ min: 1, max: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      lot: fc.nat(),
      units: fc.integer({ min: 1, max: 8 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('report' as const),
      lot: fc.nat(),
      units: fc.integer({ min: 1, max: 8 }),
    }),
  }
)

/**
 * Steps for a bucket's holds: short waits (within a hold), spends reported soon, and charges in
 * runs that drain what the bucket has. Where a report that released too much would show: the
 * bucket refills past tokens still held, charges take that room, and the held tokens are spent.
 */
const bucketStep: fc.Arbitrary<Step[]> = fc.oneof(
  fc
    .record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 3 * SECOND }) })
    .map((s) => [s]),
  fc
    .record({
      kind: fc.constant('reserve' as const),
      units: fc.integer({ min: 1, max: 8 }),
      ahead: fc.constant(false),
      rampOnly: fc.constant(false),
    })
    .map((s) => [s]),
  fc
    .record({ lot: fc.nat(), units: fc.integer({ min: 1, max: 8 }) })
    .map(({ lot, units }): Step[] => [
      { kind: 'spend', lot, units },
      { kind: 'report', lot: 0, units },
    ]),
  fc
    .integer({ min: 1, max: 12 })
    .map((count) => Array.from({ length: count }, (): Step => ({ kind: 'charge' }))),
  fc
    .record({
      kind: fc.constant('spend' as const),
      lot: fc.nat(),
      units: fc.integer({ min: 1, max: 8 }),
    })
    .map((s) => [s])
)

/** Runs the steps; every unit admitted that an exact limiter would have refused. */
function overAdmitted(policy: LeasablePolicy, steps: readonly Step[]): string[] {
  const admits = exactOracle(policy)
  let key: KeyState | undefined
  let nowMs = T0
  const lots: Held[] = []
  const over: string[] = []
  for (const s of steps) {
    if (s.kind === 'wait') nowMs += s.ms
    else if (s.kind === 'reserve') {
      const ask = s.ahead
        ? { units: 0, minUnits: 0, nextUnits: s.units, rampOnly: s.rampOnly }
        : { units: s.units, minUnits: 0, ...(s.later ? { laterPerStep: s.later } : {}) }
      const reserved = reserveKey(key, policy, nowMs, ask)
      key = reserved.state
      if (reserved.granted > 0)
        lots.push({
          units: reserved.granted,
          validFromMs: nowMs,
          validUntilMs: reserved.validUntilMs,
          spent: 0,
        })
      if (reserved.next) lots.push({ units: reserved.next.granted, ...reserved.next, spent: 0 })
      for (const grant of [...(reserved.ramp ?? []), ...(reserved.later ?? [])])
        lots.push({ units: grant.granted, ...grant, spent: 0 })
    } else if (s.kind === 'charge') {
      const outcome = chargeKey(key, policy, nowMs, 1)
      key = outcome.state
      if (outcome.decision.allowed && !admits(nowMs)) over.push(`charge at ${nowMs - T0}`)
    } else if (s.kind === 'report') {
      // Units spent are reported late, lapsed or not: no more than were spent.
      const reported = lots.filter((lot) => lot.spent > 0)
      const lot = reported[s.lot % Math.max(1, reported.length)]
      if (!lot) continue
      const units = Math.min(s.units, lot.spent)
      lot.spent -= units
      key = handBackKey('spent', key, policy, nowMs, units, lot)
    } else {
      // A lot that still has units and can be spent now, picked by `s.lot`; or handed back,
      // lapsed too (a lessee returns what lapsed unspent at a window's end).
      const open = lots.filter(
        (lot) =>
          lot.units > 0 &&
          (s.kind === 'refund' || (nowMs < lot.validUntilMs && lot.validFromMs <= nowMs))
      )
      const lot = open[s.lot % Math.max(1, open.length)]
      if (!lot) continue
      const units = Math.min(s.units, lot.units)
      lot.units -= units
      if (s.kind === 'refund') key = handBackKey('refund', key, policy, nowMs, units, lot)
      else {
        lot.spent += units
        for (let i = 0; i < units; i++) if (!admits(nowMs)) over.push(`spend at ${nowMs - T0}`)
      }
    }
  }
  return over
}

const policies: LeasablePolicy[] = [
  { algorithm: 'sliding-window', limit: 10, periodMs: 10 * SECOND },
  // Its next window's ramp has a unit every 4 slots of 25 ms: asks ahead reach it.
  { algorithm: 'sliding-window', limit: 40, periodMs: 4 * SECOND },
  { algorithm: 'fixed-window', limit: 10, periodMs: 10 * SECOND },
  { algorithm: 'token-bucket', limit: 10, periodMs: 10 * SECOND, burst: 10 },
  { algorithm: 'gcra', limit: 10, periodMs: 10 * SECOND, burst: 6 },
]

describe('leased units, spent whenever their lessee likes within their span', () => {
  it('counts tokens a lessee holds as still in the bucket: spent late, they never top a refilled bucket', () => {
    const bucket = policies[3]!
    const steps: Step[] = [
      { kind: 'reserve', units: 8, ahead: false, rampOnly: false },
      { kind: 'wait', ms: 4 * SECOND },
      ...Array.from({ length: 9 }, (): Step => ({ kind: 'charge' })),
      { kind: 'spend', lot: 0, units: 5 },
    ]
    expect(overAdmitted(bucket, steps)).toEqual([])
  })

  it.each([policies[3]!, policies[4]!])(
    'lets a bucket refill past held tokens only as they are reported spent ($algorithm)',
    (bucket) => {
      const steps: Step[] = [
        { kind: 'reserve', units: 8, ahead: false, rampOnly: false },
        { kind: 'spend', lot: 0, units: 1 },
        { kind: 'report', lot: 0, units: 1 },
        { kind: 'wait', ms: 5 * SECOND },
        ...Array.from({ length: 10 }, (): Step => ({ kind: 'charge' })),
        { kind: 'spend', lot: 0, units: 8 },
      ]
      expect(overAdmitted(bucket, steps)).toEqual([])
    }
  )

  it.each([policies[0]!, policies[2]!])(
    'keeps a window’s count plus what was charged ahead for the next within the limit ($algorithm)',
    (policy) => {
      const steps: Step[] = [
        { kind: 'wait', ms: 8 * SECOND },
        { kind: 'reserve', units: 5, ahead: true, rampOnly: false },
        ...Array.from({ length: 10 }, (): Step => ({ kind: 'charge' })),
        { kind: 'wait', ms: 2.5 * SECOND },
        { kind: 'spend', lot: 0, units: 5 },
        ...Array.from({ length: 10 }, (): Step => ({ kind: 'charge' })),
      ]
      expect(overAdmitted(policy, steps)).toEqual([])
    }
  )

  it('counts units granted for later in a short window from their time, under the estimate then', () => {
    // The previous window full: room comes back at 1 unit per 100 ms as it slides out. Units
    // for later are granted from that room before it is there; plain charges take the rest.
    const policy = policies[1]!
    const steps: Step[] = [
      { kind: 'wait', ms: 40 },
      ...Array.from({ length: 40 }, (): Step => ({ kind: 'charge' })),
      { kind: 'wait', ms: 4 * SECOND + 100 },
      { kind: 'reserve', units: 8, ahead: false, rampOnly: false, later: 1 },
      ...Array.from({ length: 3 }, (): Step => ({ kind: 'charge' })),
      { kind: 'wait', ms: 300 },
      ...Array.from({ length: 3 }, (): Step => ({ kind: 'charge' })),
      ...Array.from({ length: 8 }, (_, lot): Step => ({ kind: 'spend', lot, units: 1 })),
      { kind: 'wait', ms: 400 },
      ...Array.from({ length: 8 }, (_, lot): Step => ({ kind: 'spend', lot, units: 1 })),
      ...Array.from({ length: 3 }, (): Step => ({ kind: 'charge' })),
    ]
    expect(overAdmitted(policy, steps)).toEqual([])
  })

  it.each([policies[3]!, policies[4]!])(
    'never admit what an exact $algorithm would refuse as spends are reported',
    (policy) => {
      fc.assert(
        fc.property(fc.array(bucketStep, { minLength: 8, maxLength: 30 }), (runs) => {
          expect(overAdmitted(policy, runs.flat())).toEqual([])
        }),
        { numRuns: 5000, seed: 19 }
      )
    }
  )

  it.each(policies)(
    'never admit what an exact $algorithm would refuse, with plain charges beside them',
    (policy) => {
      fc.assert(
        fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
          expect(overAdmitted(policy, steps)).toEqual([])
        }),
        { numRuns: 1000, seed: 19 }
      )
    }
  )
})
