import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { Lot } from '../../../src/limiter/leased/key-lease'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import type { Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }
const ref = { ruleId: 'conserve', key: 'k', policy }
const START = 10 * MINUTE + 1_000

type Step =
  | { kind: 'take'; min: number; max: number; afterMs: number }
  | { kind: 'back'; share: number; afterMs: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc
    .record({ min: fc.integer({ min: 0, max: 3 }), extra: fc.integer({ min: 0, max: 3_000 }) })
    .chain(({ min, extra }) =>
      fc.record({
        kind: fc.constant('take' as const),
        min: fc.constant(min),
        max: fc.constant(min + extra),
        afterMs: fc.integer({ min: 0, max: 40 }),
      })
    ),
  fc.record({
    kind: fc.constant('back' as const),
    share: fc.double({ min: 0, max: 1, noNaN: true }),
    afterMs: fc.integer({ min: 0, max: 40 }),
  })
)

/**
 * A lease book as a location's object uses it (needs of 0 to 3, wants of up to 3,000 more, units
 * its isolates hand back), against a lessor granting what it is asked up to a room that comes
 * and goes: it never hands out more than it was granted and given back, less what it returned.
 */
describe('a lease book conserves units', () => {
  it('hands out at most what it was granted and given back, less what it handed back', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 20 }),
        async (steps, rooms) => {
          let nowMs = START
          let granted = 0
          let refunded = 0
          let calls = 0
          const upstream: Upstream = {
            timeoutMs: 1_000,
            reserve(_lease, _policy, ask): Promise<Reservation> {
              const room = rooms[calls++ % rooms.length]!
              const offered = Math.min(ask.units, room)
              const given = offered >= ask.minUnits ? offered : 0
              granted += given
              return Promise.resolve({
                granted: given,
                decision: {
                  allowed: given > 0,
                  limit: policy.limit,
                  remaining: room - given,
                  resetAtMs: 11 * MINUTE,
                  retryAfterMs: given > 0 ? 0 : 100,
                },
                chargedAtMs: nowMs,
                validUntilMs: 11 * MINUTE,
                epoch: 'e',
                horizonMs: 250,
                scarce: given < ask.units,
              })
            },
            refund(_lease, _policy, lot): Promise<void> {
              refunded += lot.units
              return Promise.resolve()
            },
          }
          const book = leaseBook({ id: 'conserve', now: () => nowMs })
          const out: Lot[] = []
          let handedOut = 0
          let back = 0
          for (const s of steps) {
            nowMs += s.afterMs
            if (s.kind === 'take') {
              const taken = await book.take(upstream, ref, s.min, s.max)
              if (taken.granted > 0) {
                expect(taken.lot!.units).toBe(taken.granted)
                handedOut += taken.granted
                out.push(taken.lot!)
              }
            } else {
              const lot = out.pop()
              const units = lot ? Math.floor(lot.units * s.share) : 0
              if (lot && units > 0 && book.takeBack(ref, { ...lot, units })) back += units
            }
            await book.settled()
            expect(handedOut).toBeLessThanOrEqual(granted + back - refunded)
          }
        }
      ),
      { numRuns: 300, seed: 42 }
    )
  })
})
