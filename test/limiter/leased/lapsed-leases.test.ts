import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import { DEFAULT_HORIZON_MS, spreadOf } from '../../../src/limiter/leased/lease-sizing'
import type { LeaseRef } from '../../../src/limiter/leased/leases'
import { Lessees, RATE_TTL_MS } from '../../../src/limiter/leased/lessees'
import type { LeaseAsk, Lot, Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const sliding: LeasablePolicy = { algorithm: 'sliding-window', limit: 1_000_000, periodMs: MINUTE }
const fixed: LeasablePolicy = { ...sliding, algorithm: 'fixed-window' }

/** A lessor that grants 10 units at each ask, and records asks and refunds. */
function lessor(clock: { ms: number }) {
  const asks: LeaseAsk[] = []
  const refunds: Lot[] = []
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(_lease, _policy, ask): Promise<Reservation> {
      asks.push(ask)
      return Promise.resolve({
        granted: 10,
        decision: { allowed: true, limit: 1, remaining: 0, resetAtMs: 0, retryAfterMs: 0 },
        chargedAtMs: clock.ms,
        validUntilMs: Math.floor(clock.ms / MINUTE) * MINUTE + MINUTE,
        epoch: 'e',
        horizonMs: 400,
        scarce: false,
      })
    },
    refund: (_lease, _policy, lot) => {
      refunds.push(lot)
      return Promise.resolve()
    },
  }
  return { upstream, asks, refunds }
}

function bookAt(clock: { ms: number }, lapsedGatherMs?: number) {
  return leaseBook({
    id: 'lapsed',
    now: () => clock.ms,
    ...(lapsedGatherMs !== undefined ? { lapsedGatherMs } : {}),
  })
}

const start = 10 * MINUTE

describe('units that lapse unspent at a window end', () => {
  it.each([
    ['a sliding window: handed back at the next request (room again there)', sliding, [7]],
    ['a fixed window: dropped (its count no longer matters)', fixed, []],
  ] as const)('%s', async (_name, policy, refunded) => {
    const clock = { ms: start + MINUTE - 100 }
    const book = bookAt(clock)
    const to = lessor(clock)
    const ref: LeaseRef = { ruleId: 'r', key: 'k', policy }
    await book.take(to.upstream, ref, 1, 3)
    await book.settled()
    // 7 held; the window ends, and the next request finds them lapsed.
    clock.ms = start + MINUTE + 5
    await book.take(to.upstream, ref, 0, 3)
    await book.settled()
    expect(to.refunds.map((lot) => lot.units)).toEqual(refunded)
    for (const lot of to.refunds) expect(lot.validUntilMs).toBe(start + MINUTE)
  })

  it("by a location's object: gathered, and sent with its next ask rather than on their own", async () => {
    const clock = { ms: start + MINUTE - 100 }
    const book = bookAt(clock, 2_000)
    const to = lessor(clock)
    const ref: LeaseRef = { ruleId: 'r', key: 'k', policy: sliding }
    await book.take(to.upstream, ref, 1, 1)
    await book.settled()
    clock.ms = start + MINUTE + 5
    // An isolate hands back 4 it let lapse; the book's own 9 lapsed too.
    const lapsed = {
      units: 4,
      chargedAtMs: start,
      validFromMs: start,
      validUntilMs: start + MINUTE,
    }
    expect(book.takeBack(ref, { ...lapsed, epoch: 'e' })).toBe(true)
    await book.take(to.upstream, ref, 1, 5)
    await book.settled()
    expect(to.refunds).toEqual([])
    const returned = to.asks.at(-1)!.returned!
    expect(returned.reduce((sum, lot) => sum + lot.units, 0)).toBe(13)
  })
})

describe("a root's lessee at a window start", () => {
  it('whose units lapsed at that start asks at its own point of the first moments, not at once', async () => {
    const clock = { ms: start + MINUTE - 100 }
    const book = leaseBook({
      id: 'spread',
      now: () => clock.ms,
      // As a location's object: the root's lessee, gathering what lapsed.
      scarceForWindow: true,
      lapsedGatherMs: 2_000,
    })
    const to = lessor(clock)
    const ref: LeaseRef = { ruleId: 'r', key: 'k', policy: sliding }
    await book.take(to.upstream, ref, 1, 1)
    await book.settled()
    const asked = to.asks.length
    // Its 9 units lapse at the window's start: its point is a share (its spread) of half the
    // horizon (400 ms) in.
    const pointMs = start + MINUTE + spreadOf('spread') * 200
    clock.ms = start + MINUTE
    expect((await book.take(to.upstream, ref, 1, 1)).granted).toBe(0)
    expect(to.asks.length).toBe(asked)
    clock.ms = Math.ceil(pointMs)
    expect((await book.take(to.upstream, ref, 1, 1)).granted).toBe(1)
    expect(to.asks.length).toBe(asked + 1)
  })
})

describe('a lessor that is itself a lessee', () => {
  it("sizes its asks by its lessees' reported demand, not by what they asked for", async () => {
    const clock = { ms: start }
    const book = bookAt(clock)
    const to = lessor(clock)
    const ref: LeaseRef = { ruleId: 'r', key: 'k', policy: sliding, ratePerMs: 2 }
    await book.take(to.upstream, ref, 1, 1)
    // 2 units per ms over a batch of 1.5 horizons, and the 1 wanted now.
    expect(to.asks[0]!.units).toBe(1 + 2 * 1.5 * DEFAULT_HORIZON_MS)
  })

  it('sums the demand its lessees reported lately', () => {
    const lessees = new Lessees()
    expect(lessees.ratePerMs(0)).toBeUndefined()
    lessees.note('a', 0, 1.5)
    lessees.note('b', 1_000, 0.5)
    lessees.note('c', 1_000)
    expect(lessees.ratePerMs(1_000)).toBe(2)
    expect(lessees.ratePerMs(RATE_TTL_MS + 500)).toBe(0.5)
  })
})
