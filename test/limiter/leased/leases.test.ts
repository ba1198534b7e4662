import { runInDurableObject } from 'cloudflare:test'
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { LimiterUnavailableError } from '../../../src/errors'
import type { ChargeCall } from '../../../src/limiter/client'
import { batchCap } from '../../../src/limiter/leased/lease-sizing'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import { LeaseBook } from '../../../src/limiter/leased/leases'
import { LOCATION_QUIET_MS } from '../../../src/limiter/leased/location-lessor'
import { RateLimiterObject } from '../../../src/limiter/rate-limiter-object'
import type { Reservation } from '../../../src/limiter/leased/reservation'
import { ClientStats } from '../../../src/limiter/calls/stats'
import { freezeClock } from '../../support/clock'
import { leaseBook } from '../../support/lease-book'
import { flaky } from '../../support/charge-calls'

const HOUR = 3_600_000
const hourly = (algorithm: LeasablePolicy['algorithm'], limit: number): LeasablePolicy =>
  algorithm === 'token-bucket' || algorithm === 'gcra'
    ? { algorithm, limit, periodMs: HOUR, burst: limit }
    : { algorithm, limit, periodMs: HOUR }

let keys = 0
/** A check on a key no other test uses. */
const leased = (policy: LeasablePolicy, fields: Partial<ChargeCall> = {}): ChargeCall => ({
  rule: { id: 'leased' },
  key: `leased|${++keys}`,
  policy,
  cost: 1,
  failMode: 'open',
  consistency: 'leased',
  ...fields,
})

/** A lessor's answer at time 0 that grants `units`, good for 5 s. */
const grant = (units: number): Reservation => ({
  granted: units,
  decision: { allowed: true, limit: 1, remaining: 0, resetAtMs: 0, retryAfterMs: 0 },
  chargedAtMs: 0,
  validUntilMs: 5_000,
  epoch: 'e',
  horizonMs: 250,
  scarce: false,
})

/** Stops the clock (objects included) just after an hour boundary, so no window ends. */
function startOfHour(): number {
  const nowMs = freezeClock()
  const startMs = Math.ceil(nowMs / HOUR) * HOUR + 1_000
  vi.setSystemTime(startMs)
  return startMs
}

/** Books standing in for isolates, counting into one `stats`. */
const books = (count: number, stats: ClientStats) =>
  Array.from({ length: count }, () => new LeaseBook({ stats }))

async function allowed(book: LeaseBook, call: ChargeCall): Promise<boolean> {
  const result = await book.charge(env.LIMITER, call, 5_000)
  return result.enforced && result.decision.allowed
}

/**
 * Charges through `book` one at a time until a denial with no call in flight (a book told the
 * key is short denies while it fetches what its lessor holds); how many were admitted.
 */
async function drain(book: LeaseBook, call: ChargeCall): Promise<number> {
  let count = 0
  for (;;) {
    // A ms between requests, as traffic has: a book measures its demand over time.
    vi.setSystemTime(Date.now() + 1)
    if (await allowed(book, call)) count++
    else {
      await book.settled()
      if (!(await allowed(book, call))) return count
      count++
    }
  }
}

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('leased quotas', () => {
  it.each(['sliding-window', 'fixed-window', 'token-bucket', 'gcra'] as const)(
    'never admits more than the limit of 500 concurrent requests over 5 isolates, and exactly the limit once unspent units are back (%s)',
    async (algorithm) => {
      startOfHour()
      const stats = new ClientStats(0)
      const isolates = books(5, stats)
      const call = leased(hourly(algorithm, 100))
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, i) => allowed(isolates[i % 5]!, call))
      )
      const admitted = results.filter(Boolean).length
      expect(admitted).toBeLessThanOrEqual(100)
      await Promise.all(isolates.map((book) => book.flush()))
      const later = await drain(isolates[0]!, call)
      expect(admitted + later).toBe(100)
      const { decisions } = stats.snapshot()
      // The drain ends with two denials: before and after its calls settled.
      expect(decisions.local + decisions.durableObject).toBe(500 + later + 2)
    }
  )

  it('denies early at most (N − 1)·B units, and hands a quiet isolate’s units back', async () => {
    let nowMs = startOfHour()
    const stats = new ClientStats(0)
    const isolates = books(4, stats)
    const policy = hourly('fixed-window', 2_000)
    const call = leased(policy)
    const B = batchCap(policy)
    expect(B).toBe(250)
    // Steady traffic in every isolate, 1 request per ms each: their batches grow to the cap.
    let admitted = 0
    for (let i = 0; i < 200; i++) {
      vi.setSystemTime(++nowMs)
      const each = await Promise.all(isolates.map((book) => allowed(book, call)))
      admitted += each.filter(Boolean).length
    }
    await Promise.all(isolates.map((book) => book.settled()))
    // Then only the first isolate is used; the others keep what they hold, unspent.
    let firstDenialAt: number | undefined
    for (let i = 0; i < 2_000 && firstDenialAt === undefined; i++) {
      vi.setSystemTime(++nowMs)
      if (await allowed(isolates[0]!, call)) admitted++
      else firstDenialAt = admitted
      await isolates[0]!.settled()
    }
    expect(firstDenialAt).toBeDefined()
    const earlyDenied = 2_000 - firstDenialAt!
    // Units sat unspent in the 3 quiet isolates: that many were denied early, within the bound.
    expect(earlyDenied).toBeGreaterThan(0)
    expect(earlyDenied).toBeLessThanOrEqual((4 - 1) * B)
    // The quiet isolates hand their units back to their location on their next touch, and the
    // location, once no isolate asked for the key in its own quiet time, to the root; then
    // they can be spent.
    nowMs += LOCATION_QUIET_MS
    vi.setSystemTime(nowMs)
    for (const book of isolates.slice(1)) {
      await allowed(book, leased(policy)) // another key: only touches the book
      await book.settled()
    }
    expect(admitted + (await drain(isolates[0]!, call))).toBe(2_000)
  })

  it('makes few Durable Object calls per request on a hot key (limit 10,000)', async () => {
    let nowMs = startOfHour()
    const stats = new ClientStats(0)
    const [book] = books(1, stats)
    const call = leased(hourly('sliding-window', 10_000))
    // 5,000 requests at 2 per ms, in pairs arriving together.
    let admitted = 0
    for (let i = 0; i < 2_500; i++) {
      vi.setSystemTime(++nowMs)
      const pair = await Promise.all([allowed(book!, call), allowed(book!, call)])
      admitted += pair.filter(Boolean).length
      await book!.settled()
    }
    expect(admitted).toBe(5_000)
    const { durableObjectCalls, decisions } = stats.snapshot()
    expect(durableObjectCalls / admitted).toBeLessThanOrEqual(0.05)
    expect(decisions.local).toBeGreaterThan(4_900)
  })

  it('reports the bucket tokens it spent with its asks: the root holds only what is unspent', async () => {
    let nowMs = startOfHour()
    const [book] = books(1, new ClientStats(0))
    const call = leased({ algorithm: 'token-bucket', limit: 36_000, periodMs: HOUR, burst: 200 })
    let admitted = 0
    for (let i = 0; i < 100; i++) {
      vi.setSystemTime((nowMs += 20))
      if (await allowed(book!, call)) admitted++
      await book!.settled()
    }
    expect(admitted).toBe(100)
    const held = await runInDurableObject(env.LIMITER.getByName(call.key), (_instance, state) => {
      const stored = state.storage.kv.get<{ state: { state: { held?: [number, number][] } } }>(
        'state'
      )
      return (stored?.state.state.held ?? []).reduce((sum, [, units]) => sum + units, 0)
    })
    // A token granted is held until reported spent or its hold ends (10 s): without the reports, at
    // least the 100 spent would still be held.
    expect(held).toBeLessThan(admitted)
  })

  it('answers from the units held at once, without a promise; a reservation comes in one', async () => {
    startOfHour()
    const book = new LeaseBook({ stats: new ClientStats(0) })
    const call = leased(hourly('sliding-window', 10_000))
    const results = []
    // Its demand is measured over time before it holds a batch.
    for (let i = 0; i < 200; i++) {
      const result = book.charge(env.LIMITER, call, 5_000)
      results.push(result)
      await result
      await book.settled()
      vi.setSystemTime(Date.now() + 1)
    }
    expect(results[0]).toBeInstanceOf(Promise)
    const plain = results.filter((result) => !(result instanceof Promise))
    expect(plain.length).toBeGreaterThan(150)
    for (const result of plain)
      expect(result).toMatchObject({ enforced: true, local: true, decision: { allowed: true } })
    for (const result of results.filter((result) => result instanceof Promise))
      expect(await result).toMatchObject({ enforced: true, local: undefined })
  })

  it('spends a window’s units only in that window', async () => {
    const MINUTE = 60_000
    let nowMs = Math.ceil(freezeClock() / MINUTE) * MINUTE + MINUTE - 100
    const book = new LeaseBook({ stats: new ClientStats(0) })
    const call = leased({ algorithm: 'fixed-window', limit: 80, periodMs: MINUTE })
    for (let i = 0; i < 20; i++) {
      vi.setSystemTime(++nowMs)
      expect(await allowed(book, call)).toBe(true)
      await book.settled()
    }
    // Units left over from the window that ended are not spent in the next one.
    vi.setSystemTime(nowMs + 100)
    expect(await drain(book, call)).toBe(80)
  })

  it('reports the decision: remaining counts what the isolate holds; a denial has the retry time', async () => {
    startOfHour()
    const book = new LeaseBook({ stats: new ClientStats(0) })
    const call = leased(hourly('fixed-window', 3))
    const first = await book.charge(env.LIMITER, call, 5_000)
    expect(first).toMatchObject({ enforced: true, decision: { allowed: true, limit: 3 } })
    expect(first.enforced && first.decision.remaining).toBe(2)
    await drain(book, call)
    const denied = await book.charge(env.LIMITER, call, 5_000)
    expect(denied).toMatchObject({ enforced: true, decision: { allowed: false, remaining: 0 } })
    expect(denied.enforced && denied.decision.retryAfterMs).toBeGreaterThan(0)
  })

  it.each([
    ['an isolate (one version at a time) hands it back at once, under the old policy', true],
    ['a location object (isolates of both versions) keeps it until it goes quiet', false],
  ])('an edited tier policy: %s; another tier keeps its own lease', async (_name, oneVersion) => {
    const refunds: { policy: LeasablePolicy; units: number }[] = []
    const upstream: Upstream = {
      timeoutMs: 1_000,
      reserve: (_lease, _policy, ask) => Promise.resolve(grant(Math.max(10, ask.minUnits))),
      refund: (_lease, policy, lot) => {
        refunds.push({ policy, units: lot.units })
        return Promise.resolve()
      },
    }
    const book = leaseBook({ now: () => 0, oneVersion })
    const free: LeasablePolicy = { ...hourly('sliding-window', 100), tier: 'free' }
    const paid: LeasablePolicy = { ...hourly('sliding-window', 1_000), tier: 'paid' }
    const take = (policy: LeasablePolicy) =>
      book.take(upstream, { ruleId: 'edited', key: 'k', policy }, 1, 1)
    for (const policy of [free, paid, free, paid]) expect((await take(policy)).granted).toBe(1)
    // Two tiers in turn: a lease each, nothing handed back.
    expect(refunds).toEqual([])
    const edited = { ...free, limit: 50 }
    expect((await take(edited)).granted).toBe(1)
    await book.settled()
    expect(refunds).toEqual(oneVersion ? [{ policy: free, units: 8 }] : [])
  })

  it('a request of the version before an edit, waiting when the edit reaches the isolate, is denied and leaves the new lease be', async () => {
    const asked: number[] = []
    const refunds: number[] = []
    let answerFirst: () => void = () => undefined
    const reservation = grant(10)
    const upstream: Upstream = {
      timeoutMs: 1_000,
      reserve: (_lease, policy) => {
        asked.push(policy.limit)
        // The first ask (the version before) is answered only once the edit has reached us.
        return asked.length === 1
          ? new Promise((resolve) => (answerFirst = () => resolve(reservation)))
          : Promise.resolve(reservation)
      },
      refund: (_lease, policy) => {
        refunds.push(policy.limit)
        return Promise.resolve()
      },
    }
    const book = leaseBook({ now: () => 0 })
    const before = hourly('sliding-window', 100)
    const after = { ...before, limit: 90 }
    const take = (policy: LeasablePolicy) =>
      book.take(upstream, { ruleId: 'edited', key: 'k', policy }, 1, 1)
    const waiting = take(before)
    expect((await take(after)).granted).toBe(1)
    answerFirst()
    expect((await waiting).granted).toBe(0)
    await book.settled()
    // Touched again, the lease before would have replaced the new one (handed back, asked again).
    expect(asked).toEqual([100, 90])
    expect(refunds).not.toContain(90)
    expect((await take(after)).granted).toBe(1)
    expect(asked).toEqual([100, 90])
  })

  it('leases a key of under 100 units a second straight from its root, one of more through its location', async () => {
    startOfHour()
    const sublease = vi.spyOn(RateLimiterObject.prototype, 'sublease')
    const reserve = vi.spyOn(RateLimiterObject.prototype, 'reserve')
    const book = new LeaseBook({ stats: new ClientStats(0) })
    // 99 a second: one call, to the root, as exact mode's.
    expect(await allowed(book, leased(hourly('sliding-window', 99 * 3_600)))).toBe(true)
    expect([sublease.mock.calls.length, reserve.mock.calls.length]).toEqual([0, 1])
    // 100 a second: to the location's object (a new isolate's is told when it opens, and asks
    // again then), which calls the root once.
    expect(await allowed(book, leased(hourly('sliding-window', 100 * 3_600)))).toBe(true)
    expect(sublease.mock.calls.length).toBeGreaterThan(0)
    expect(reserve.mock.calls.length).toBe(2)
  })

  it('follows the fail mode when the object cannot be reached', async () => {
    const stats = new ClientStats(0)
    const book = new LeaseBook({ stats })
    const policy = hourly('sliding-window', 10)
    const call = leased(policy, { rule: { id: 'throws' }, key: 'throws|leased' })
    expect(await book.charge(flaky, call, 1_000)).toEqual({ enforced: false, reason: 'error' })
    expect(stats.snapshot().failOpen).toBe(1)
    const closed = await Promise.resolve(
      book.charge(flaky, { ...call, failMode: 'closed' }, 1_000)
    ).catch((e: unknown) => e)
    expect(closed).toBeInstanceOf(LimiterUnavailableError)
    // A root that never answers: the location's object gives up first (within part of the
    // isolate's wait) and answers with an error, so the isolate hears it rather than timing out.
    // (A key leased through it: one of a few a second leases straight from the root.)
    const busy = hourly('sliding-window', 1_000_000)
    const hangs = leased(busy, { rule: { id: 'hangs' }, key: 'hangs|leased' })
    // A wait long enough that the location's give-up (at 60 % of it) comes first under load.
    expect(await book.charge(flaky, hangs, 200)).toEqual({ enforced: false, reason: 'error' })
  })
})
