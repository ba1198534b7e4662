import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import { LeaseBook, type LeaseRef, type Take } from '../../../src/limiter/leased/leases'
import type { LeaseAsk, Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const HOUR = 3_600_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 1_000_000, periodMs: HOUR }
const ref: LeaseRef = { ruleId: 'r', key: 'k', policy }
const start = 10 * HOUR

/** A location's object that opens `opensInMs` after each ask that comes before it, then grants. */
function openingLessor(clock: { ms: number }, opensAtMs: number) {
  const asks: { atMs: number; ask: LeaseAsk }[] = []
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(_lease, _policy, ask): Promise<Reservation> {
      asks.push({ atMs: clock.ms, ask })
      const opening = clock.ms < opensAtMs ? { opensInMs: opensAtMs - clock.ms } : {}
      return Promise.resolve({
        granted: clock.ms < opensAtMs ? 0 : ask.units,
        decision: { allowed: true, limit: 1_000_000, remaining: 0, resetAtMs: 0, retryAfterMs: 0 },
        chargedAtMs: clock.ms,
        validUntilMs: start + HOUR,
        epoch: 'e',
        horizonMs: 250,
        scarce: false,
        ...opening,
      })
    },
    refund: () => Promise.resolve(),
  }
  return { upstream, asks }
}

/** An isolate's book that just started, on the test's clock. */
function coldBook(clock: { ms: number }): LeaseBook {
  return leaseBook({ id: 'cold', now: () => clock.ms })
}

afterEach(() => {
  vi.useRealTimers()
})

describe('an isolate whose location object opens later (a deploy)', () => {
  it('asks again at the opening, once, for every request waiting by then, and denies none', async () => {
    vi.useFakeTimers()
    const clock = { ms: start }
    const book = coldBook(clock)
    const to = openingLessor(clock, start + 300)
    const takes: Promise<Take>[] = [book.take(to.upstream, ref, 1, 1)]
    await vi.advanceTimersByTimeAsync(0)
    // Told to come back at 300 ms; four more requests meanwhile.
    for (let i = 0; i < 4; i++) {
      clock.ms += 60
      await vi.advanceTimersByTimeAsync(60)
      takes.push(book.take(to.upstream, ref, 1, 1))
    }
    clock.ms = start + 300
    await vi.advanceTimersByTimeAsync(60)
    const taken = await Promise.all(takes)
    expect(taken.map(({ granted }) => granted)).toEqual([1, 1, 1, 1, 1])
    expect(taken.every(({ waited }) => waited)).toBe(true)
    expect(to.asks.map(({ atMs }) => atMs - start)).toEqual([0, 300])
    const again = to.asks[1]!.ask
    // The five waiting, plus a batch at the demand they showed (5 over 300 ms).
    expect(again.units).toBeGreaterThan(5)
    expect(again.ratePerMs).toBeGreaterThan(0)
  })

  it('takes a second word to wait as a denial, not as another wait', async () => {
    vi.useFakeTimers()
    const clock = { ms: start }
    const book = coldBook(clock)
    // A lessor whose clock lags: still before its opening when asked again.
    const to = openingLessor(clock, start + 10_000)
    const take = book.take(to.upstream, ref, 1, 1)
    await vi.advanceTimersByTimeAsync(0)
    clock.ms = start + 10_000 - 5_000
    await vi.advanceTimersByTimeAsync(10_000)
    expect((await take).granted).toBe(0)
    expect(to.asks).toHaveLength(2)
  })
})

describe('a lessor of lessees that just started (a deploy)', () => {
  /** A root that grants eight times each ask (a starting lessee's, while the key is roomy). */
  function generousRoot(clock: { ms: number }) {
    const refunds: number[] = []
    const upstream: Upstream = {
      timeoutMs: 1_000,
      reserve(_lease, _policy, ask): Promise<Reservation> {
        return Promise.resolve({
          granted: 8 * ask.units,
          decision: {
            allowed: true,
            limit: 1_000_000,
            remaining: 0,
            resetAtMs: 0,
            retryAfterMs: 0,
          },
          chargedAtMs: clock.ms,
          validUntilMs: start + HOUR,
          epoch: 'e',
          horizonMs: 250,
          scarce: false,
        })
      },
      refund: (_lease, _policy, lot) => {
        refunds.push(lot.units)
        return Promise.resolve()
      },
    }
    return { upstream, refunds }
  }

  it('keeps what its lessor granted beyond its plan while starting, and hands the excess back after', async () => {
    const clock = { ms: start }
    const book = leaseBook({
      id: 'region',
      now: () => clock.ms,
      starting: (nowMs) => nowMs < start + 1_000,
    })
    const root = generousRoot(clock)
    // Its lessees report 0.1 a ms: a batch of about 25 units over the 250 ms horizon.
    const reported: LeaseRef = { ...ref, ratePerMs: 0.1 }
    expect((await book.take(root.upstream, reported, 1, 100)).granted).toBe(100)
    for (let i = 0; i < 5; i++) {
      clock.ms += 10
      await book.take(root.upstream, reported, 1, 10)
    }
    await book.settled()
    expect(root.refunds).toEqual([])
    clock.ms = start + 1_000
    await book.take(root.upstream, reported, 1, 10)
    await book.settled()
    expect(root.refunds).toHaveLength(1)
    expect(root.refunds[0]).toBeGreaterThan(500)
  })
})
