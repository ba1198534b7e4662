import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LeasablePolicy } from '../../../src/algorithms/reserve'
import { HandBack, type ReturnableLease } from '../../../src/limiter/leased/hand-back'
import type { HeldLot } from '../../../src/limiter/leased/key-lease'
import type { Lot } from '../../../src/limiter/leased/reservation'

const sliding: LeasablePolicy = { algorithm: 'sliding-window', limit: 6_000, periodMs: 60_000 }
/** Units held until `validUntilMs` (this lessee's clock the root's). */
const lot = (units: number, validUntilMs: number): HeldLot => ({
  units,
  epoch: 'e',
  chargedAtMs: 0,
  validFromMs: 0,
  validUntilMs,
  hereFromMs: 0,
  hereUntilMs: validUntilMs,
})

/** A lease whose lessor records refunds, answering each when `settle` is called. */
function leaseWith(lots: HeldLot[], lapsed?: Lot[]) {
  const refunds: Lot[] = []
  const pending: (() => void)[] = []
  const lease: ReturnableLease = {
    ruleId: 'r',
    key: 'k',
    policy: sliding,
    lots,
    lapsed,
    demandSinceReserve: 0,
    horizonMs: 400,
    roundTripMs: 0,
    quietUntilMs: 0,
    scarceUntilMs: 0,
    aheadRefusedUntilMs: 0,
    lastUsedMs: 0,
    waiting: 0,
    to: {
      timeoutMs: 1_000,
      reserve: () => Promise.reject(new Error('not asked')),
      refund: (_lease, _policy, refunded) => {
        refunds.push(refunded)
        return new Promise<void>((resolve) => pending.push(resolve))
      },
    },
  }
  return { lease, refunds, settle: () => pending.splice(0).forEach((resolve) => resolve()) }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('handing units back', () => {
  it('all of them: what is held while it can be spent and what lapsed, each kept alive', async () => {
    // The lot that ended at 500 lapsed (a sliding window's units are room again at the root).
    const kept: Promise<unknown>[] = []
    const handBack = new HandBack((promise) => kept.push(promise), 0)
    const { lease, refunds, settle } = leaseWith(
      [lot(4, 2_000), lot(0, 2_000), lot(5, 500)],
      [lot(2, 1_000)]
    )
    handBack.all(lease, 1_000)
    expect(refunds.map(({ units }) => units)).toEqual([4, 2, 5])
    expect(lease.lots).toEqual([])
    expect(lease.lapsed).toBeUndefined()
    expect(kept).toHaveLength(3)
    let done = false
    const settled = handBack.settled().then(() => (done = true))
    await Promise.resolve()
    expect(done).toBe(false)
    settle()
    await settled
    expect(done).toBe(true)
  })

  it('lapsed units: at once, or gathered over keys into one pass when the gathering ends', () => {
    vi.useFakeTimers()
    const now = new HandBack(() => undefined, 0)
    const first = leaseWith([], [lot(3, 1_000)])
    now.lapsed(first.lease)
    expect(first.refunds).toHaveLength(1)

    const gathering = new HandBack(() => undefined, 200)
    const a = leaseWith([], [lot(3, 1_000)])
    const b = leaseWith([], [lot(4, 1_000)])
    gathering.lapsed(a.lease)
    gathering.lapsed(b.lease)
    vi.advanceTimersByTime(199)
    expect(a.refunds.length + b.refunds.length).toBe(0)
    vi.advanceTimersByTime(1)
    expect([...a.refunds, ...b.refunds].map(({ units }) => units)).toEqual([3, 4])
  })

  it('lapsed units that went with an ask are not handed back again', () => {
    vi.useFakeTimers()
    const handBack = new HandBack(() => undefined, 200)
    const { lease, refunds } = leaseWith([], [lot(3, 1_000)])
    handBack.lapsed(lease)
    lease.lapsed = undefined
    handBack.sentWithAsk(lease)
    vi.advanceTimersByTime(200)
    expect(refunds).toEqual([])
  })
})
