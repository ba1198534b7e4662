import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { measureRate, type KeyLease } from '../../../src/limiter/leased/key-lease'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import type { LeaseRef } from '../../../src/limiter/leased/leases'
import type { LeaseAsk, Lot, Reservation } from '../../../src/limiter/leased/reservation'
import type { Decision } from '../../../src/types'
import { leaseBook } from '../../support/lease-book'

const SECOND = 1_000
/** The small key of the scale simulator: 10 a second. */
const small: LeasablePolicy = { algorithm: 'sliding-window', limit: 10, periodMs: SECOND }
const start = 100 * SECOND
/** A key with room for what a lessor of lessees asks for. */
const roomy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: 60_000 }

function decision(allowed: boolean): Decision {
  return { allowed, limit: 10, remaining: allowed ? 3 : 0, resetAtMs: 0, retryAfterMs: 0 }
}

/** A lessor whose answers the test lets land, at the time it sets. */
function heldLessor(clock: { ms: number }) {
  const asks: LeaseAsk[] = []
  const refunds: Lot[] = []
  const answers: ((answer: Partial<Reservation>) => void)[] = []
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(_lease, _policy, ask): Promise<Reservation> {
      asks.push(ask)
      const chargedAtMs = clock.ms
      return new Promise((resolve) =>
        answers.push((answer) =>
          resolve({
            granted: ask.units,
            decision: decision(true),
            chargedAtMs,
            validUntilMs: Math.floor(chargedAtMs / SECOND) * SECOND + SECOND,
            epoch: 'e',
            horizonMs: 250,
            scarce: false,
            ...answer,
          })
        )
      )
    },
    refund: (_lease, _policy, lot) => {
      refunds.push(lot)
      return Promise.resolve()
    },
  }
  return { upstream, asks, refunds, answers }
}

function bookAt(clock: { ms: number }) {
  return leaseBook({ id: 'sparse', now: () => clock.ms })
}

const ref: LeaseRef = { ruleId: 'r', key: 'k', policy: small }

describe('a lessee that sees few requests', () => {
  it('measures no rate from two requests close together: one interval is not a rate', () => {
    const lease = { demandSinceReserve: 0, waiting: 0 } as KeyLease
    // Each request waits for its own reservation, which opens the next measure with it.
    for (const atMs of [0, 5_000, 5_300]) {
      measureRate(lease, start + atMs, 1)
      lease.demandSinceReserve += 1
    }
    // 1/300 per ms (3 a second) is what one interval says: enough for a batch held here.
    expect(lease.rate).toBe(0)
    // Requests that join a reservation in flight, or spend what is held, are counted.
    lease.demandSinceReserve += 9
    measureRate(lease, start + 6_300)
    // A mean over the 6.3 s measured so far, the last second weighing most.
    expect(lease.rate).toBeCloseTo(((9 / 1_000) * (1 - Math.exp(-1))) / (1 - Math.exp(-6.3)), 9)
  })

  it('counts the requests waiting behind a cold start in its first measure of demand', async () => {
    const clock = { ms: start }
    const book = bookAt(clock)
    const to = heldLessor(clock)
    // Ten requests 10 ms apart while the first reservation travels (100 ms).
    const taken = [book.take(to.upstream, ref, 1, 1)]
    for (let i = 1; i < 10; i++) {
      clock.ms += 10
      taken.push(book.take(to.upstream, ref, 1, 1))
    }
    await Promise.resolve()
    expect(to.asks).toHaveLength(1)
    clock.ms = start + 100
    to.answers[0]!({})
    for (let i = 0; i < 4; i++) await Promise.resolve()
    // The second ask says the demand: the 8 requests still waiting behind the one that opens
    // it, over 100 ms (counted only once decided, they read as none: 0).
    expect(to.asks).toHaveLength(2)
    expect(to.asks[1]!.ratePerMs).toBeCloseTo(8 / 100, 9)
    to.answers[1]!({ granted: 9 })
    expect((await Promise.all(taken)).map((take) => take.granted)).toEqual(Array(10).fill(1))
  })

  it('weighs a short first measure by the time it covers', () => {
    const lease = { demandSinceReserve: 0, waiting: 0 } as KeyLease
    measureRate(lease, start)
    // No request over the first 60 ms, then 20 over 400 ms: 20 over 460 ms, not 0 moved a
    // little toward 20/400.
    measureRate(lease, start + 60)
    lease.demandSinceReserve += 20
    measureRate(lease, start + 460)
    const w = (ms: number) => 1 - Math.exp(-ms / 1_000)
    expect(lease.rate).toBeCloseTo(((20 / 400) * w(400)) / w(460), 9)
    expect(lease.rate).toBeGreaterThan(0.04)
  })

  it('is admitted by units charged for it in its window that land after the window ended', async () => {
    const clock = { ms: start + SECOND - 40 }
    const book = bookAt(clock)
    const to = heldLessor(clock)
    const taken = book.take(to.upstream, ref, 1, 1)
    // A request that comes after the charge waits for the same reservation.
    clock.ms += 10
    await Promise.resolve()
    const late = book.take(to.upstream, ref, 1, 1)
    await Promise.resolve()
    // Charged at the root in the window's last 40 ms; the answer lands 60 ms into the next.
    expect(to.asks).toHaveLength(1)
    clock.ms = start + SECOND + 60
    to.answers[0]!({ granted: 3 })
    const first = await taken
    expect(first.granted).toBe(1)
    // The root's decision, taken when it charged the units, is the request's: the root's
    // remaining, and nothing held here (the rest lapsed).
    expect(first).toMatchObject({ waited: true, decidedAtMs: start + SECOND - 40 })
    expect(first.decision).toMatchObject({ allowed: true, remaining: 3 })
    // The later request may not spend them (they lapsed for it): it asks for its own.
    await Promise.resolve()
    await Promise.resolve()
    expect(to.asks).toHaveLength(2)
    to.answers[1]!({})
    expect((await late).granted).toBe(1)
    await book.settled()
    // The 2 left of the late grant lapsed unspent, and went back.
    expect(to.refunds.map((lot) => lot.units)).toEqual([2])
  })

  it('asks for each request when told the key is scarce: it is not quieted, nor denied unasked', async () => {
    const clock = { ms: start + 100 }
    const book = bookAt(clock)
    const to = heldLessor(clock)
    const first = book.take(to.upstream, ref, 1, 1)
    await Promise.resolve()
    to.answers[0]!({ granted: 0, decision: decision(false), scarce: true, refillInMs: 400 })
    expect((await first).decision.allowed).toBe(false)
    // 200 ms later the window has slid: a request asks again, and the lessor has room.
    clock.ms += 200
    const second = book.take(to.upstream, ref, 1, 1)
    await Promise.resolve()
    expect(to.asks).toHaveLength(2)
    to.answers[1]!({})
    expect((await second).decision.allowed).toBe(true)
  })
})

describe('a lessor of lessees (a location or regional object)', () => {
  it('shares a grant among the takes that waited for it by what each wants', async () => {
    const clock = { ms: start }
    const book = bookAt(clock)
    const to = heldLessor(clock)
    const reported: LeaseRef = { ...ref, policy: roomy, ratePerMs: 0.5 }
    // Three lessees' asks, each needing a unit and wanting a batch, behind one call.
    const taken = [600, 300, 100].map((want) => book.take(to.upstream, reported, 1, want))
    await Promise.resolve()
    expect(to.asks).toHaveLength(1)
    to.answers[0]!({ granted: 500 })
    const granted = (await Promise.all(taken)).map((take) => take.granted)
    // Served whole in turn, the first would take all 500 and the others wait for another call.
    expect(granted).toEqual([300, 150, 50])
    expect(to.asks).toHaveLength(1)
  })

  it("asks with its lessees' reported demand, not with the rate of their asks", async () => {
    const clock = { ms: start }
    const book = bookAt(clock)
    const to = heldLessor(clock)
    // A location's object: its isolates report 0.5 a ms and ask for batches of 200.
    const reported: LeaseRef = { ...ref, policy: roomy, ratePerMs: 0.5 }
    const first = book.take(to.upstream, reported, 1, 200)
    await Promise.resolve()
    clock.ms += 50
    to.answers[0]!({})
    await first
    for (let i = 0; i < 40 && to.asks.length < 2; i++) {
      clock.ms += 10
      await book.take(to.upstream, reported, 1, 200)
    }
    // Its own measure reads 200 units each 10 ms (20 a ms): batches, not spending.
    expect(to.asks.length).toBeGreaterThanOrEqual(2)
    expect(to.asks.at(-1)!.ratePerMs).toBe(0.5)
  })
})
