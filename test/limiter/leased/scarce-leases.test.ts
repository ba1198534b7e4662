import { describe, expect, it, vi } from 'vitest'
import { bucketHoldMs, type LeasablePolicy } from '../../../src/algorithms/reserve'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import { scarceWaitMs, spreadOf } from '../../../src/limiter/leased/lease-sizing'
import { LimiterUnavailableError } from '../../../src/errors'
import { LeaseBook } from '../../../src/limiter/leased/leases'
import type { ReserveAsk, Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }
const ref = { ruleId: 'scarce', key: 'k', policy }
const HORIZON = 400

/**
 * A lessor that grants `room()` at most and says scarce when it gave less than asked; with
 * `refillInMs`, a location's object that says when it asks the root again (and, with
 * `rootShort`, that the root is short of room).
 */
function lessor(room: () => number, refillInMs?: () => number, rootShort = false) {
  const asks: { atMs: number; ask: ReserveAsk }[] = []
  let clock = 0
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(_lease, _policy, ask): Promise<Reservation> {
      asks.push({ atMs: clock, ask })
      const offered = Math.min(ask.units, room())
      const granted = offered >= ask.minUnits ? offered : 0
      return Promise.resolve({
        granted,
        decision: {
          allowed: true,
          limit: policy.limit,
          remaining: 0,
          resetAtMs: 0,
          retryAfterMs: 0,
        },
        chargedAtMs: clock,
        validUntilMs: Math.floor(clock / MINUTE) * MINUTE + MINUTE,
        epoch: 'e',
        horizonMs: HORIZON,
        scarce: granted < ask.units,
        ...(refillInMs ? { refillInMs: refillInMs() } : {}),
        ...(rootShort ? { rootShort } : {}),
      })
    },
    refund: () => Promise.resolve(),
  }
  return { upstream, asks, setClock: (ms: number) => (clock = ms) }
}

/** A book on a fake clock that takes one unit every `everyMs` from `startMs` until `endMs`. */
async function drive(
  book: LeaseBook,
  to: ReturnType<typeof lessor>,
  clock: { ms: number },
  startMs: number,
  endMs: number,
  everyMs: number,
  max = 1
): Promise<{ allowed: number; denied: number }> {
  let allowed = 0
  let denied = 0
  for (clock.ms = startMs; clock.ms < endMs; clock.ms += everyMs) {
    to.setClock(clock.ms)
    const taken = await book.take(to.upstream, ref, 1, max)
    if (taken.granted > 0) allowed++
    else denied++
    await book.settled()
  }
  return { allowed, denied }
}

/** A lease book on a fake clock, that keeps nothing running in the background itself. */
function bookOn(clock: { ms: number }, id: string, scarceForWindow = false): LeaseBook {
  return leaseBook({ id, now: () => clock.ms, scarceForWindow })
}

describe('a lease book on a scarce key', () => {
  const start = 10 * MINUTE + 5_000

  /**
   * A book on a fake clock, whose lessor is a location's object that has 5 units at each ask
   * and asks the root again at each whole second (and says so).
   */
  function toldWhen(id: string) {
    const clock = { ms: start }
    const book = bookOn(clock, id)
    const to = lessor(
      () => 5,
      () => 1_000 - (clock.ms % 1_000)
    )
    return { clock, book, to }
  }
  for (const [who, scarceForWindow] of [
    ['an isolate (its location is its lessor)', false],
    ["a location's object (the root is its lessor)", true],
  ] as const) {
    it(`${who}: once told scarce, asks once per wait for its demand until the next ask`, async () => {
      const clock = { ms: start }
      const id = `book-${who}`
      const book = bookOn(clock, id, scarceForWindow)
      let room = 5
      const to = lessor(() => room)
      // 1 unit per ms of demand; the lessor has 5 units at each ask: scarce.
      const first = await drive(book, to, clock, start, start + 3_000, 1)
      const asks = to.asks.filter((a) => a.atMs >= start + 1_000)
      const wait = scarceWaitMs(HORIZON, spreadOf(id))
      // Scarce: one ask per wait, each for the demand until the next ask (1 unit per ms).
      expect(asks.length).toBeGreaterThanOrEqual(Math.floor(2_000 / wait) - 1)
      expect(asks.length).toBeLessThanOrEqual(Math.ceil(2_000 / wait) + 1)
      for (const { ask } of asks) expect(ask.units).toBeGreaterThanOrEqual(Math.floor(wait))
      for (const { ask } of asks) expect(ask.units).toBeLessThan(1.6 * wait)
      expect(first.denied).toBeGreaterThan(2_500)

      // The lessor has room again: what is denied is the rest of the last wait, no more.
      room = 1_000_000
      const second = await drive(book, to, clock, start + 3_000, start + 6_000, 1)
      expect(second.denied).toBeLessThanOrEqual(Math.ceil(wait))
      // An isolate's lessor (its location) is short only until its next grant: past two
      // horizons the isolate refills as it needs. A root's lessee stays paced to the window's end.
      clock.ms = to.asks.at(-1)!.atMs + 1
      expect(book.quietForMs(ref) > 0).toBe(scarceForWindow)
    })
  }

  it("comes back when a location's object says it refills, not a horizon later", async () => {
    const { clock, book, to } = toldWhen('told-when')
    await drive(book, to, clock, start, start + 5_000, 1)
    // Past the first second (the book measures its demand first): asks of more than 5.
    const asks = to.asks.filter((a) => a.atMs >= start + 1_000)
    expect(asks.length).toBeGreaterThanOrEqual(3)
    const gaps = asks.slice(1).map((a, i) => a.atMs - asks[i]!.atMs)
    // One ask a second, each just after the location's own refill (never a horizon later).
    for (const { atMs } of asks) {
      expect(atMs % 1_000).toBeLessThanOrEqual(1)
    }
    expect(gaps.every((gap) => gap > HORIZON)).toBe(true)
  })

  it('told short by its location, denies at once what it holds no units for, and asks for its demand until then in the background', async () => {
    const { clock, book, to } = toldWhen('short')
    await drive(book, to, clock, start, start + 2_000, 1)
    let waited = 0
    let denied = 0
    for (clock.ms = start + 2_000; clock.ms < start + 5_000; clock.ms++) {
      to.setClock(clock.ms)
      const taken = await book.take(to.upstream, ref, 1, 1)
      if (taken.waited) waited++
      if (taken.granted === 0) denied++
      await book.settled()
    }
    // Every request decided without a wait, the denials included; one ask per refill.
    expect(waited).toBe(0)
    expect(denied).toBeGreaterThan(2_900)
    const asks = to.asks.filter((a) => a.atMs >= start + 2_000)
    expect(asks.length).toBeLessThanOrEqual(4)
    // Each for the demand until the location's next units (1 per ms, a second): what the
    // location counts as this isolate's demand, and asks the root for.
    for (const { ask } of asks) {
      expect(ask.minUnits).toBe(0)
      expect(ask.units).toBeGreaterThan(900)
    }
  })

  it.each([
    ['waits for units when the root has room', false],
    ['denies at once while one refill travels, when the root is short', true],
  ] as const)('out of units at a burst, an isolate %s', async (_name, rootShort) => {
    const clock = { ms: start }
    const book = bookOn(clock, `burst-${String(rootShort)}`)
    const to = lessor(
      () => 1_000_000,
      () => 100,
      rootShort
    )
    // 1 request per ms for a second: the location grants all it is asked for, never scarce.
    await drive(book, to, clock, start, start + 1_000, 1)
    // A burst of 5,000 at one instant: far more than a batch.
    to.setClock(clock.ms)
    const asked = to.asks.length
    const burst = await Promise.all(
      Array.from({ length: 5_000 }, () => book.take(to.upstream, ref, 1, 1))
    )
    const waited = burst.filter((taken) => taken.waited)
    expect(waited.length > 0).toBe(!rootShort)
    if (rootShort) {
      expect(burst.filter((taken) => taken.granted === 0).length).toBeGreaterThan(0)
      // One refill in flight serves them all (the one started as the units ran low).
      expect(to.asks.length - asked).toBe(1)
    }
  })

  it("a bucket stays short on the root's word past two horizons, for its hold: out of tokens, an isolate denies at once", async () => {
    const clock = { ms: start }
    const book = bookOn(clock, 'bucket-short')
    const bucket: LeasablePolicy = {
      algorithm: 'token-bucket',
      limit: 6_000_000,
      periodMs: MINUTE,
      burst: 6_000_000,
    }
    const bucketRef = { ...ref, policy: bucket }
    expect(bucketHoldMs(bucket)).toBeGreaterThan(2 * HORIZON + 50)
    const to = lessor(
      () => 1_000_000,
      () => 100,
      true
    )
    // A request a ms for a second, every answer with the location's word that the root is short.
    for (; clock.ms < start + 1_000; clock.ms++) {
      to.setClock(clock.ms)
      await book.take(to.upstream, bucketRef, 1, 1)
      await book.settled()
    }
    // Past two horizons (the last answer said nothing else), before the book forgets a key
    // unused for a second: a burst far beyond what it holds.
    clock.ms += 2 * HORIZON + 50
    to.setClock(clock.ms)
    const burst = await Promise.all(
      Array.from({ length: 5_000 }, () => book.take(to.upstream, bucketRef, 1, 1))
    )
    expect(burst.filter((taken) => taken.waited)).toHaveLength(0)
    expect(burst.filter((taken) => taken.granted === 0).length).toBeGreaterThan(0)
  })

  it("a root's lessee says the key is scarce only on the root's word, not while it waits out an overloaded root", async () => {
    const clock = { ms: start }
    const book = bookOn(clock, 'overloaded', true)
    const overloaded: Upstream = {
      timeoutMs: 1_000,
      reserve: () => Promise.reject(new LimiterUnavailableError('overloaded')),
      refund: () => Promise.resolve(),
    }
    // Its isolates report a rate (a lessee that sees under a unit per horizon asks per request,
    // and heeds no word on scarcity).
    const busy = { ...ref, ratePerMs: 1 }
    const taken = await book.take(overloaded, busy, 1, 1)
    expect(taken.granted).toBe(0)
    // It waits before asking again (short, for its own lessees' asks), but the root never
    // said the room is short: its isolates are not told so for the rest of the window.
    expect(book.isShort(ref)).toBe(true)
    expect(book.isScarce(ref)).toBe(false)
    const to = lessor(() => 0)
    clock.ms += 10_000
    to.setClock(clock.ms)
    await book.take(to.upstream, busy, 1, 1)
    expect(book.isScarce(ref)).toBe(true)
  })

  it('denies for now a request still without units at its deadline (a lessor slow under load)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const book = leaseBook({ id: 'deadline', now: () => start })
      const slow: Upstream = {
        timeoutMs: 1_000,
        reserve: () => new Promise<Reservation>(() => undefined),
        refund: () => Promise.resolve(),
      }
      let settled: Awaited<ReturnType<LeaseBook['take']>> | undefined
      void book.take(slow, ref, 1, 1, start + 50).then((taken) => (settled = taken))
      await vi.advanceTimersByTimeAsync(49)
      expect(settled).toBeUndefined()
      await vi.advanceTimersByTimeAsync(1)
      expect(settled).toMatchObject({ granted: 0, waited: true })
      expect(settled!.decision.allowed).toBe(false)
    } finally {
      vi.useRealTimers()
    }
  })

  it('counts denied demand as what was asked for, so its next ask is sized by it', async () => {
    const clock = { ms: start }
    const book = bookOn(clock, 'counts')
    const to = lessor(() => 0)
    // As a location's object is asked: each ask needs 1 and wants 5 (an isolate's batch).
    await drive(book, to, clock, start, start + 2_000, 5, 5)
    const last = to.asks.at(-1)!.ask
    // 1 unit per ms wanted, all denied: the ask is still about a wait's demand.
    expect(last.units).toBeGreaterThan(0.5 * scarceWaitMs(HORIZON, spreadOf('counts')))
  })
})
