import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  concurrency,
  chargeKey,
  releaseLease,
  type ConcurrencyState,
  type KeyState,
  type Policy,
} from '../../src/algorithms'
import {
  expectRateBound,
  maxInAnyWindow,
  perAlignedWindow,
  SLACK,
  type Admitted,
} from '../support/bounds'

/** Seeded and bounded: the same cases on every run, a few seconds in all. */
const RUNS = { seed: 8_008, numRuns: 150 }

/** One request: time since the previous one, in thousandths of a period; its cost (0 only looks). */
interface Arrival {
  gap: number
  cost: number
}

/**
 * Bursts (gap 0), runs close together, and quiet stretches of up to 3 periods, so that window
 * boundaries and refills are crossed in every way; costs mostly 1, some above any limit.
 */
const arrivals = fc.array(
  fc.record({
    gap: fc.oneof(fc.constant(0), fc.nat(30), fc.nat(3_000)),
    cost: fc.oneof(fc.constant(1), fc.nat(25)),
  }),
  { minLength: 1, maxLength: 300 }
)

/** Any start, aligned to nothing in particular. */
const start = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 })
const limit = fc.integer({ min: 1, max: 20 })
const periodMs = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 10_000 }))
const penaltyMs = fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined })

/** Runs the arrivals through the key's state as the Durable Object does (penalty box included). */
function admitted(policy: Policy, startMs: number, sequence: Arrival[]): Admitted[] {
  let key: KeyState | undefined
  let atMs = startMs
  const out: Admitted[] = []
  for (const { gap, cost } of sequence) {
    atMs += Math.floor((gap * policy.periodMs) / 1_000)
    const { state, decision } = chargeKey(key, policy, atMs, cost)
    key = state
    if (decision.allowed && cost > 0) out.push({ atMs, cost, delayMs: decision.delayMs ?? 0 })
  }
  return out
}

const withPenalty = <P extends Policy>(policy: P, penalty: number | undefined): P =>
  penalty === undefined ? policy : { ...policy, penaltyMs: penalty }

describe('no algorithm admits more than its documented bound, for any arrivals and costs', () => {
  it('sliding-log: at most limit in every window of one period', () => {
    fc.assert(
      fc.property(
        limit,
        periodMs,
        penaltyMs,
        start,
        arrivals,
        (limit, periodMs, penalty, t, seq) => {
          const policy = withPenalty(
            { algorithm: 'sliding-log', limit, periodMs } as const,
            penalty
          )
          expect(maxInAnyWindow(admitted(policy, t, seq), periodMs)).toBeLessThanOrEqual(limit)
        }
      ),
      RUNS
    )
  })

  it('fixed-window: at most limit per aligned window, denied requests counted or not', () => {
    fc.assert(
      fc.property(
        limit,
        periodMs,
        fc.boolean(),
        penaltyMs,
        start,
        arrivals,
        (limit, periodMs, countDenied, penalty, t, seq) => {
          const policy = withPenalty(
            { algorithm: 'fixed-window', limit, periodMs, countDenied } as const,
            penalty
          )
          const sums = perAlignedWindow(admitted(policy, t, seq), periodMs)
          expect(Math.max(0, ...sums)).toBeLessThanOrEqual(limit)
        }
      ),
      RUNS
    )
  })

  it('sliding-window counter: at most limit per aligned window, under 2 × limit in any window', () => {
    fc.assert(
      fc.property(
        limit,
        periodMs,
        penaltyMs,
        start,
        arrivals,
        (limit, periodMs, penalty, t, seq) => {
          const policy = withPenalty(
            { algorithm: 'sliding-window', limit, periodMs } as const,
            penalty
          )
          const items = admitted(policy, t, seq)
          expect(Math.max(0, ...perAlignedWindow(items, periodMs))).toBeLessThanOrEqual(limit)
          expect(maxInAnyWindow(items, periodMs)).toBeLessThan(2 * limit)
        }
      ),
      RUNS
    )
  })

  it.each(['token-bucket', 'gcra'] as const)(
    '%s: at most burst + rate × elapsed over any interval',
    (algorithm) => {
      fc.assert(
        fc.property(
          limit,
          periodMs,
          limit,
          penaltyMs,
          start,
          arrivals,
          (limit, periodMs, burst, penalty, t, seq) => {
            const policy = withPenalty({ algorithm, limit, periodMs, burst }, penalty)
            expectRateBound(admitted(policy, t, seq), burst, limit / periodMs)
          }
        ),
        RUNS
      )
    }
  )

  it('leaky bucket (meter): at most burst + rate × elapsed over any interval', () => {
    fc.assert(
      fc.property(
        limit,
        periodMs,
        limit,
        penaltyMs,
        start,
        arrivals,
        (limit, periodMs, burst, penalty, t, seq) => {
          const policy = withPenalty(
            { algorithm: 'leaky-bucket', limit, periodMs, burst } as const,
            penalty
          )
          expectRateBound(admitted(policy, t, seq), burst, limit / periodMs)
        }
      ),
      RUNS
    )
  })

  it('leaky bucket (shaper): the same bound, waits within maxWait, and an even flow out', () => {
    fc.assert(
      fc.property(
        limit,
        periodMs,
        limit,
        fc.nat(5_000),
        start,
        arrivals,
        (limit, periodMs, burst, maxWaitMs, t, seq) => {
          const policy = {
            algorithm: 'leaky-bucket',
            limit,
            periodMs,
            burst,
            shape: true,
            maxWaitMs,
          } as const
          const items = admitted(policy, t, seq)
          const rate = limit / periodMs
          expectRateBound(items, burst, rate)
          for (const { delayMs } of items) expect(delayMs).toBeLessThanOrEqual(maxWaitMs)
          // Requests leave in order, each after the previous one's cost has leaked (to within the
          // 1 ms the delay is rounded up by): the origin sees at most rate × span, plus the last.
          const leaves = items.map(({ atMs, delayMs, cost }) => ({ at: atMs + delayMs, cost }))
          for (let i = 0; i < leaves.length; i++) {
            let sum = 0
            for (let j = i + 1; j < leaves.length; j++) {
              sum += leaves[j - 1]!.cost
              const bound = rate * (leaves[j]!.at - leaves[i]!.at + 1)
              if (sum > bound + SLACK) expect.fail(`${sum} units left in a span allowing ${bound}`)
            }
          }
        }
      ),
      RUNS
    )
  })

  it('concurrency: never more than limit leases live, whatever is released when', () => {
    const steps = fc.array(
      fc.record({
        // In thousandths of the lease.
        gap: fc.oneof(fc.constant(0), fc.nat(100), fc.nat(1_500)),
        action: fc.constantFrom('acquire', 'acquire', 'look', 'release'),
        pick: fc.nat(),
      }),
      { minLength: 1, maxLength: 300 }
    )
    fc.assert(
      fc.property(limit, periodMs, start, steps, (limit, leaseMs, t, steps) => {
        const policy = {
          algorithm: 'concurrency',
          limit,
          periodMs: leaseMs,
          queue: 0,
          maxWaitMs: 0,
        } as const
        let state: ConcurrencyState | undefined
        let atMs = t
        // What clients were granted and have not released: id → lease expiry.
        const held = new Map<string, number>()
        for (const { gap, action, pick } of steps) {
          atMs += Math.floor((gap * leaseMs) / 1_000)
          if (action === 'release') {
            const ids = [...held.keys()]
            if (ids.length === 0 || state === undefined) continue
            const id = ids[pick % ids.length]!
            held.delete(id)
            state = releaseLease(state, id, policy, atMs)
            continue
          }
          const outcome = concurrency.charge(state, policy, atMs, action === 'look' ? 0 : 1)
          state = outcome.state
          if (outcome.decision.leaseId !== undefined)
            held.set(outcome.decision.leaseId, atMs + leaseMs)
          const live = [...held.values()].filter((expiresAtMs) => expiresAtMs > atMs).length
          expect(live).toBeLessThanOrEqual(limit)
        }
      }),
      RUNS
    )
  })
})
