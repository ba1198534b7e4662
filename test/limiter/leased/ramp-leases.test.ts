import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import { QUIET_MS, type LeaseRef } from '../../../src/limiter/leased/leases'
import type { Lot, Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }
const windowMs = 10 * MINUTE
/** As a location's object asks: for what its isolates report (100 a ms). */
const ref: LeaseRef = { ruleId: 'r', key: 'k', policy, ratePerMs: 100 }

/**
 * A root short of room: nothing now, and two lots of the window's ramp (from 50 and 100 ms
 * into the window beginning at `windowMs`, both to 10 s in).
 */
function shortRoot(clock: { ms: number }) {
  const refunds: Lot[] = []
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(): Promise<Reservation> {
      return Promise.resolve({
        granted: 0,
        decision: { allowed: false, limit: 1, remaining: 0, resetAtMs: 0, retryAfterMs: 40 },
        chargedAtMs: clock.ms,
        validUntilMs: clock.ms,
        epoch: 'e',
        ramp: [50, 100].map((fromMs) => ({
          granted: 5,
          validFromMs: windowMs + fromMs,
          validUntilMs: windowMs + 10_000,
          epoch: 'e',
        })),
        horizonMs: 1_500,
        scarce: true,
      })
    },
    refund: (_lease, _policy, lot) => {
      refunds.push(lot)
      return Promise.resolve()
    },
  }
  return { upstream, refunds }
}

async function bookWithRamp(clock: { ms: number }) {
  const book = leaseBook({ id: 'location', now: () => clock.ms })
  const root = shortRoot(clock)
  await book.take(root.upstream, ref, 1, 10)
  await book.settled()
  return { book, root }
}

describe("a window's ramp held by a lessee", () => {
  it('is expected at its first lot’s time: lessees told to come back then find it', async () => {
    const clock = { ms: windowMs + 10 }
    const { book } = await bookWithRamp(clock)
    // Told the key is short, it waits before asking again; the ramp's lots come in sooner.
    expect(book.quietForMs(ref)).toBeGreaterThan(100)
    // A ms past their time by this clock: a reading stands for any time in its ms.
    expect(book.unitsDueInMs(ref)).toBe(41)
    clock.ms = windowMs + 60
    expect(book.unitsDueInMs(ref)).toBe(41)
  })

  it('stays held while its lessees are quiet: they come back when it opens', async () => {
    const clock = { ms: windowMs - 3_000 }
    const { book, root } = await bookWithRamp(clock)
    clock.ms += QUIET_MS + 500
    expect(book.handBackQuiet()).toBe(true)
    await book.settled()
    expect(root.refunds).toEqual([])
  })

  it('lapsing unspent, goes back as one lot, whatever each lot’s start', async () => {
    const clock = { ms: windowMs - 3_000 }
    const { book, root } = await bookWithRamp(clock)
    clock.ms = windowMs + 10_000 + QUIET_MS
    expect(book.handBackQuiet()).toBe(false)
    await book.settled()
    expect(root.refunds.map((lot) => [lot.units, lot.validUntilMs])).toEqual([
      [10, windowMs + 10_000],
    ])
  })
})
