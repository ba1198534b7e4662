import { describe, expect, it } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { heldNow } from '../../../src/limiter/leased/key-lease'
import type { Upstream } from '../../../src/limiter/leased/lease-calls'
import type { LeaseRef } from '../../../src/limiter/leased/leases'
import type { LeaseAsk, Reservation } from '../../../src/limiter/leased/reservation'
import { leaseBook } from '../../support/lease-book'

const MINUTE = 60_000
const policy: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000_000, periodMs: MINUTE }
const windowMs = 10 * MINUTE
/** As a location's object asks: for what its isolates report (100 a ms). */
const ref: LeaseRef = { ruleId: 'r', key: 'k', policy, ratePerMs: 100 }

/**
 * A root short of room: 1 unit now and, on its first answer, 20 lots of 1,000 for later in the
 * window (every 50 ms from `laterFromMs` on); the asks it was sent.
 */
function shortRoot(
  clock: { ms: number },
  laterFromMs: number | undefined,
  { scarce = true, onAsk = 1, units = 1_000 } = {}
) {
  const asks: LeaseAsk[] = []
  const upstream: Upstream = {
    timeoutMs: 1_000,
    reserve(_lease, _policy, ask): Promise<Reservation> {
      asks.push(ask)
      const later =
        laterFromMs !== undefined && asks.length === onAsk
          ? Array.from({ length: 20 }, (_, j) => ({
              granted: units,
              validFromMs: clock.ms + laterFromMs + 50 * j,
              validUntilMs: clock.ms + 10_000,
              epoch: 'e',
            }))
          : undefined
      return Promise.resolve({
        granted: 1,
        decision: { allowed: true, limit: 1, remaining: 0, resetAtMs: 0, retryAfterMs: 0 },
        chargedAtMs: clock.ms,
        validUntilMs: clock.ms + 10_000,
        epoch: 'e',
        ...(later ? { later } : {}),
        horizonMs: 1_000,
        scarce,
      })
    },
    refund: () => Promise.resolve(),
  }
  return { upstream, asks }
}

function book(clock: { ms: number }) {
  return leaseBook({ id: 'location', now: () => clock.ms })
}

describe('units a short key’s lessee holds for later in the window', () => {
  it('are spent only from their time', async () => {
    const clock = { ms: windowMs + 10_000 }
    const lessee = book(clock)
    const root = shortRoot(clock, 50)
    expect((await lessee.take(root.upstream, ref, 1, 1)).granted).toBe(1)
    // Told the key is short, it does not ask again yet: the first lot for later is 50 ms away,
    // 51 by this clock (a reading stands for any time in its ms: a ms's margin on the root's).
    expect(lessee.unitsDueInMs(ref)).toBe(51)
    expect((await lessee.take(root.upstream, ref, 1, 1)).granted).toBe(0)
    // Within a clock's uncertainty of the lot's time, a request waits for it.
    clock.ms += 50
    const waiting = lessee.take(root.upstream, ref, 1, 5_000)
    clock.ms += 1
    expect(await waiting).toMatchObject({ granted: 1_000, waited: true })
    expect((await lessee.take(root.upstream, ref, 1, 1)).granted).toBe(0)
    expect(root.asks).toHaveLength(1)
  })

  it('count as held: its next ask is for what it lacks beyond them', async () => {
    const asked: number[] = []
    for (const laterFromMs of [2_500, undefined]) {
      const clock = { ms: windowMs + 10_000 }
      const lessee = book(clock)
      const root = shortRoot(clock, laterFromMs)
      await lessee.take(root.upstream, ref, 1, 1)
      clock.ms += lessee.quietForMs(ref)
      await lessee.take(root.upstream, ref, 1, 1)
      expect(root.asks).toHaveLength(2)
      asked.push(root.asks[1]!.units)
    }
    const [withLater, without] = asked as [number, number]
    expect(without).toBeGreaterThan(20_000)
    expect(withLater).toBe(without - 20_000)
  })

  it('stand in for a refill while they cover what it would fetch', async () => {
    const clock = { ms: windowMs + 10_000 }
    const lessee = book(clock)
    // Its second answer (its demand measured by then) holds 100,000 for the next second.
    const root = shortRoot(clock, 50, { scarce: false, onAsk: 2, units: 5_000 })
    await lessee.take(root.upstream, ref, 1, 1)
    clock.ms += 60
    await lessee.take(root.upstream, ref, 1, 1)
    // Each lot spendable a ms after its time by this clock (a reading is any time in its ms).
    clock.ms += 1
    for (let step = 0; step < 10; step++) {
      clock.ms += 50
      expect((await lessee.take(root.upstream, ref, 1, 5_000)).granted).toBe(5_000)
    }
    await lessee.settled()
    expect(root.asks).toHaveLength(2)
  })

  it('are told apart from the next window’s units', () => {
    const lots = [
      { units: 1, validFromMs: windowMs, validUntilMs: windowMs + MINUTE },
      { units: 2, validFromMs: windowMs + 30_000, validUntilMs: windowMs + MINUTE },
      { units: 4, validFromMs: windowMs + MINUTE, validUntilMs: windowMs + 2 * MINUTE },
    ].map((lot) => ({
      ...lot,
      chargedAtMs: windowMs,
      epoch: 'e',
      // This lessee's clock the root's.
      hereFromMs: lot.validFromMs,
      hereUntilMs: lot.validUntilMs,
    }))
    const lease = { ...ref, lots, lapsed: undefined } as unknown as Parameters<typeof heldNow>[0]
    expect(heldNow(lease, windowMs + 10_000)).toEqual({ now: 1, soon: 2, later: 4, ending: 0 })
  })
})
