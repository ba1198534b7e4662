import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { LotSpan } from '../../../src/algorithms/types'
import type { LimiterNamespace } from '../../../src/limiter/client'
import { RateLimiterObject } from '../../../src/limiter/rate-limiter-object'
import type { LeaseKey, LesseeAsk, Lot, Reservation } from '../../../src/limiter/leased/reservation'
import { SimNamespace } from '../../../tools/scale/namespace'
import type { Fault } from '../../../tools/scale/object-server'
import { oracleFor } from '../../../tools/scale/oracle'
import { VirtualClock } from '../../../tools/scale/virtual-time'
import { settle } from '../../support/virtual-clock'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000

/** What the key's root granted, and what it took back, as it applied them. */
interface Tally {
  granted: number
  /** Units handed back that the root counted as room again (refunds, lapsed units). */
  back: number
  /** Units reported spent that left a bucket's hold. */
  spent: number
  /** Hand-backs applied a second time, at any tier: the very lots an ask carried, again. */
  again: number
  /** The lots asks carried, as the tiers applied them (the simulator passes them by reference). */
  seen: WeakSet<object>
}

/**
 * Notes the lots an ask hands back as applied: a lessee sends what lapsed or was spent once,
 * in lists of their own, so the very same list again is a retry that applies them twice.
 */
function noteApplied(tally: Tally, ask: LesseeAsk): void {
  for (const lots of [ask.returned, ask.spent]) {
    if (!lots?.length) continue
    if (tally.seen.has(lots)) tally.again++
    tally.seen.add(lots)
  }
}

/** The limiter's object, its root's grants and hand-backs tallied as it applies them. */
function tallied(tally: Tally) {
  return class TalliedObject extends RateLimiterObject {
    #epoch(): string | undefined {
      return this.ctx.storage.kv.get<string>('lease-epoch')
    }

    override reserve(policy: LeasablePolicy, ask: LesseeAsk): Reservation {
      const epoch = this.#epoch()
      const ofEpoch = (lots: Lot[] | undefined) =>
        (lots ?? []).reduce((sum, lot) => sum + (lot.epoch === epoch ? lot.units : 0), 0)
      tally.back += ofEpoch(ask.returned)
      tally.spent += ofEpoch(ask.spent)
      noteApplied(tally, ask)
      const reservation = super.reserve(policy, ask)
      tally.granted += reservation.granted + (reservation.next?.granted ?? 0)
      for (const grant of [...(reservation.ramp ?? []), ...(reservation.later ?? [])])
        tally.granted += grant.granted
      return reservation
    }

    override async sublease(
      lease: LeaseKey,
      policy: LeasablePolicy,
      ask: LesseeAsk
    ): Promise<Reservation> {
      noteApplied(tally, ask)
      return super.sublease(lease, policy, ask)
    }

    override refund(policy: LeasablePolicy, units: number, lot: LotSpan, epoch: string): void {
      if (epoch === this.#epoch()) tally.back += units
      super.refund(policy, units, lot, epoch)
    }
  }
}

const policy: fc.Arbitrary<LeasablePolicy> = fc
  .record({
    algorithm: fc.constantFrom('sliding-window', 'fixed-window', 'token-bucket', 'gcra'),
    // Through a location's object (200 a second), or straight from the root (20).
    limit: fc.constantFrom(12_000, 1_200),
    periodMs: fc.constant(MINUTE),
  })
  .map(({ algorithm, limit, periodMs }): LeasablePolicy =>
    algorithm === 'token-bucket' || algorithm === 'gcra'
      ? { algorithm, limit, periodMs, burst: limit / 6 }
      : { algorithm, limit, periodMs }
  )

const fault = fc.constantFrom<Fault | undefined>(
  undefined,
  undefined,
  'lost',
  'refused',
  'overloaded'
)

/**
 * Three isolates of one location asking across a window's end, every call to an object meeting
 * the fault its turn draws (an answer lost after the call ran, a refusal before it ran with a
 * retryable error or as overloaded): each tier's hand-backs are applied at most once, so the
 * root never takes back more than it granted and was not spent, and no window admits more than
 * the limit.
 */
describe('units through the tiers, whatever calls fail', () => {
  it('are conserved: what is spent and what goes back never exceed what the root granted', async () => {
    await fc.assert(
      fc.asyncProperty(
        policy,
        fc.array(fault, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 20, maxLength: 200 }),
        async (limit, faults, gaps) => {
          const startMs = 1_800_000_000_000 + MINUTE - 4_000
          const clock = new VirtualClock(startMs)
          const tally: Tally = { granted: 0, back: 0, spent: 0, again: 0, seen: new WeakSet() }
          let calls = 0
          const namespace = new SimNamespace(
            clock,
            { oneWayMs: () => 5, hintLocation: () => 0 },
            tallied(tally),
            { serviceMs: 1, queueBound: 100, fault: () => faults[calls++ % faults.length] },
            { arrived: () => undefined, overloaded: () => undefined, started: () => undefined }
          )
          const view = namespace.view(0) as unknown as LimiterNamespace
          const call = {
            rule: { id: 'faults' },
            key: 'faults',
            policy: limit,
            cost: 5,
            failMode: 'closed' as const,
          }
          const books = Array.from({ length: 3 }, (_, i) =>
            leaseBook({ id: `isolate-${i}`, location: 'colo' })
          )
          const admitted: number[] = []
          const restore = clock.install()
          try {
            let atMs = startMs
            gaps.forEach((gap, i) => {
              atMs += gap * 20
              clock.at(atMs, () => {
                const decided = Promise.resolve(books[i % books.length]!.charge(view, call, 1_000))
                decided.then(
                  (result) => {
                    if (result.enforced && result.decision.allowed)
                      admitted.push(result.decidedAtMs ?? Date.now())
                  },
                  () => undefined
                )
              })
            })
            await settle(clock, startMs + 10 * MINUTE)
            for (const book of books) void book.flush()
            await settle(clock, startMs + 20 * MINUTE)
          } finally {
            restore()
          }
          const spentUnits = admitted.length * call.cost
          expect(tally.again).toBe(0)
          expect(spentUnits + tally.back).toBeLessThanOrEqual(tally.granted)
          expect(tally.spent).toBeLessThanOrEqual(spentUnits)
          const oracle = oracleFor(limit)
          const over = admitted.sort((a, b) => a - b).filter((t) => !oracle.admit(t, call.cost))
          expect(over).toEqual([])
        }
      ),
      { seed: 1_234, numRuns: 150 }
    )
  })
})
